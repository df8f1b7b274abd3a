/* minivm's tokenizer: integers, names, keywords, operators; '#' starts a comment. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "lexer.h"

void mvm_lexer_init(struct mvm_lexer *lx, const char *src, size_t size)
{
	lx->src = lx->pos = src;
	lx->end = src + size;
	lx->line = lx->column = 1;
}

static void advance(struct mvm_lexer *lx)
{
	if (*lx->pos == '\n') {
		lx->line++;
		lx->column = 1;
	} else {
		lx->column++;
	}
	lx->pos++;
}

static void skip_space_and_comments(struct mvm_lexer *lx)
{
	while (lx->pos < lx->end) {
		if (*lx->pos == '#') {
			while (lx->pos < lx->end && *lx->pos != '\n')
				advance(lx);
		} else if (isspace((unsigned char)*lx->pos)) {
			advance(lx);
		} else {
			break;
		}
	}
}

static const struct {
	const char *word;
	enum mvm_token_kind kind;
} keywords[] = {
	{"func", MVM_TOK_FUNC}, {"var", MVM_TOK_VAR}, {"if", MVM_TOK_IF},
	{"else", MVM_TOK_ELSE}, {"while", MVM_TOK_WHILE}, {"return", MVM_TOK_RETURN},
	{"print", MVM_TOK_PRINT},
};

static struct mvm_token error_token(struct mvm_token t, const char *message)
{
	t.kind = MVM_TOK_ERROR;
	t.text = message;
	t.length = strlen(message);
	return t;
}

struct mvm_token mvm_lexer_next(struct mvm_lexer *lx)
{
	struct mvm_token t = {0};
	char c, n;
	size_t i;

	skip_space_and_comments(lx);
	t.line = lx->line;
	t.column = lx->column;
	t.text = lx->pos;
	if (lx->pos >= lx->end) {
		t.kind = MVM_TOK_EOF;
		return t;
	}
	c = *lx->pos;
	if (isdigit((unsigned char)c)) {
		uint64_t v = 0;

		while (lx->pos < lx->end && isdigit((unsigned char)*lx->pos)) {
			unsigned d = (unsigned)(*lx->pos - '0');

			if (v > ((uint64_t)INT64_MAX - d) / 10)
				return error_token(t, "integer literal does not fit in 64 bits");
			v = v * 10 + d;
			advance(lx);
		}
		if (lx->pos < lx->end && (isalpha((unsigned char)*lx->pos) || *lx->pos == '_'))
			return error_token(t, "letter right after a number");
		t.kind = MVM_TOK_INT;
		t.value = (int64_t)v;
		t.length = (size_t)(lx->pos - t.text);
		return t;
	}
	if (isalpha((unsigned char)c) || c == '_') {
		while (lx->pos < lx->end && (isalnum((unsigned char)*lx->pos) || *lx->pos == '_'))
			advance(lx);
		t.length = (size_t)(lx->pos - t.text);
		t.kind = MVM_TOK_IDENT;
		for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
			if (strlen(keywords[i].word) == t.length &&
			    !memcmp(keywords[i].word, t.text, t.length))
				t.kind = keywords[i].kind;
		return t;
	}
	advance(lx);
	n = lx->pos < lx->end ? *lx->pos : 0;
	t.length = 1;
	switch (c) {
	case '(': t.kind = MVM_TOK_LPAREN; break;
	case ')': t.kind = MVM_TOK_RPAREN; break;
	case '{': t.kind = MVM_TOK_LBRACE; break;
	case '}': t.kind = MVM_TOK_RBRACE; break;
	case '[': t.kind = MVM_TOK_LBRACKET; break;
	case ']': t.kind = MVM_TOK_RBRACKET; break;
	case ',': t.kind = MVM_TOK_COMMA; break;
	case ';': t.kind = MVM_TOK_SEMICOLON; break;
	case '+': t.kind = MVM_TOK_PLUS; break;
	case '-': t.kind = MVM_TOK_MINUS; break;
	case '*': t.kind = MVM_TOK_STAR; break;
	case '/': t.kind = MVM_TOK_SLASH; break;
	case '%': t.kind = MVM_TOK_PERCENT; break;
	case '<': t.kind = n == '=' ? MVM_TOK_LE : MVM_TOK_LT; break;
	case '>': t.kind = n == '=' ? MVM_TOK_GE : MVM_TOK_GT; break;
	case '=': t.kind = n == '=' ? MVM_TOK_EQ : MVM_TOK_ASSIGN; break;
	case '!': t.kind = n == '=' ? MVM_TOK_NE : MVM_TOK_BANG; break;
	default:
		if (isprint((unsigned char)c))
			snprintf(lx->message, sizeof(lx->message), "unexpected character '%c'", c);
		else
			snprintf(lx->message, sizeof(lx->message), "unexpected byte 0x%02x",
				 (unsigned char)c);
		return error_token(t, lx->message);
	}
	if (n == '=' && (c == '<' || c == '>' || c == '=' || c == '!')) {
		advance(lx);
		t.length = 2;
	}
	return t;
}

const char *mvm_token_describe(enum mvm_token_kind kind)
{
	static const char *const names[] = {
		"end of file", "integer", "name", "'func'", "'var'", "'if'", "'else'", "'while'",
		"'return'", "'print'", "'('", "')'", "'{'", "'}'", "'['", "']'", "','", "';'",
		"'='", "'+'", "'-'", "'*'", "'/'", "'%'", "'<'", "'<='", "'>'", "'>='", "'=='",
		"'!='", "'!'", "invalid token",
	};
	return kind <= MVM_TOK_ERROR ? names[kind] : "?";
}
