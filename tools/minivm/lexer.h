/* minivm's tokenizer. */
#ifndef MVM_LEXER_H
#define MVM_LEXER_H

#include <stddef.h>
#include <stdint.h>

enum mvm_token_kind {
	MVM_TOK_EOF, MVM_TOK_INT, MVM_TOK_IDENT,
	MVM_TOK_FUNC, MVM_TOK_VAR, MVM_TOK_IF, MVM_TOK_ELSE, MVM_TOK_WHILE, MVM_TOK_RETURN,
	MVM_TOK_PRINT,
	MVM_TOK_LPAREN, MVM_TOK_RPAREN, MVM_TOK_LBRACE, MVM_TOK_RBRACE, MVM_TOK_LBRACKET,
	MVM_TOK_RBRACKET, MVM_TOK_COMMA, MVM_TOK_SEMICOLON, MVM_TOK_ASSIGN,
	MVM_TOK_PLUS, MVM_TOK_MINUS, MVM_TOK_STAR, MVM_TOK_SLASH, MVM_TOK_PERCENT,
	MVM_TOK_LT, MVM_TOK_LE, MVM_TOK_GT, MVM_TOK_GE, MVM_TOK_EQ, MVM_TOK_NE, MVM_TOK_BANG,
	MVM_TOK_ERROR, /* text holds the message */
};

struct mvm_token {
	enum mvm_token_kind kind;
	const char *text;   /* into the source (or the error message) */
	size_t length;
	int64_t value;      /* MVM_TOK_INT */
	uint32_t line, column;
};

struct mvm_lexer {
	const char *src, *end, *pos;
	uint32_t line, column;
	char message[48];   /* an error token's text when it names the bad character */
};

void mvm_lexer_init(struct mvm_lexer *lx, const char *src, size_t size);
struct mvm_token mvm_lexer_next(struct mvm_lexer *lx);
const char *mvm_token_describe(enum mvm_token_kind kind);

#endif
