/* minivm's compiler: a recursive-descent parser that emits bytecode as it goes (no syntax
 * tree). Stops at the first error with "path:line:column: message". */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "mvm.h"

#define MAX_LOCALS 4096
#define MAX_NESTING 200

struct local {
	const char *name;
	size_t length;
};

struct compiler {
	struct mvm_lexer lx;
	struct mvm_token tok, prev;
	struct mvm_program *prog;
	struct mvm_function *fn;
	struct local locals[MAX_LOCALS];
	uint32_t depth;          /* operand stack depth at this point */
	uint32_t loop_nesting;   /* while statements around this point */
	uint32_t nesting;        /* parser recursion: bounded so no input can exhaust the stack */
	struct mvm_token *refs;  /* first reference of each function, for "undefined" */
	jmp_buf fail;
};

static void error_at(struct compiler *c, const struct mvm_token *t, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s:%u:%u: error: ", c->prog->path, t->line, t->column);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	longjmp(c->fail, 1);
}

static void *xrealloc(struct compiler *c, void *p, size_t size)
{
	void *q = realloc(p, size);

	if (!q)
		error_at(c, &c->tok, "out of memory");
	return q;
}

static void next(struct compiler *c)
{
	c->prev = c->tok;
	c->tok = mvm_lexer_next(&c->lx);
	if (c->tok.kind == MVM_TOK_ERROR)
		error_at(c, &c->tok, "%.*s", (int)c->tok.length, c->tok.text);
}

static int accept(struct compiler *c, enum mvm_token_kind kind)
{
	if (c->tok.kind != kind)
		return 0;
	next(c);
	return 1;
}

static void expect(struct compiler *c, enum mvm_token_kind kind, const char *where)
{
	if (!accept(c, kind))
		error_at(c, &c->tok, "expected %s %s, found %s", mvm_token_describe(kind), where,
			 mvm_token_describe(c->tok.kind));
}

/* How each opcode changes the stack depth (CALL: minus its argument count). */
static int stack_effect(unsigned op, int32_t arg)
{
	switch (op) {
	case MVM_OP_CONST: case MVM_OP_LOAD: case MVM_OP_FUNC: case MVM_OP_FLUSH:
		return 1;
	case MVM_OP_NEG: case MVM_OP_NOT: case MVM_OP_JUMP: case MVM_OP_LOOP:
	case MVM_OP_NEWARRAY: case MVM_OP_LEN: case MVM_OP_ITER:
		return 0;
	case MVM_OP_CALL:
		return -arg;
	case MVM_OP_STORE_INDEX:
		return -3;
	default:
		return -1; /* binary operators, STORE, POP, JUMP_IF_FALSE, RETURN, PRINT, INDEX */
	}
}

static uint32_t emit_at(struct compiler *c, const struct mvm_token *at, unsigned op,
			int32_t arg, int64_t imm)
{
	struct mvm_function *fn = c->fn;
	struct mvm_insn *in;

	if (fn->code_len == fn->code_cap) {
		fn->code_cap = fn->code_cap ? fn->code_cap * 2 : 64;
		fn->code = xrealloc(c, fn->code, fn->code_cap * sizeof(*fn->code));
	}
	in = &fn->code[fn->code_len];
	in->op = (uint8_t)op;
	in->arg = arg;
	in->imm = imm;
	in->line = at->line;
	in->column = at->column;
	c->depth = (uint32_t)((int)c->depth + stack_effect(op, arg));
	if (c->depth > fn->max_stack)
		fn->max_stack = c->depth;
	return fn->code_len++;
}

static uint32_t emit(struct compiler *c, unsigned op, int32_t arg)
{
	return emit_at(c, &c->prev, op, arg, 0);
}

static int name_is(const struct mvm_token *t, const char *s)
{
	return strlen(s) == t->length && !memcmp(s, t->text, t->length);
}

static int find_local(struct compiler *c, const struct mvm_token *t)
{
	uint32_t i;

	for (i = 0; i < c->fn->local_count; i++)
		if (c->locals[i].name && c->locals[i].length == t->length &&
		    !memcmp(c->locals[i].name, t->text, t->length))
			return (int)i;
	return -1;
}

/* A new local slot; name NULL for hidden ones (loop iteration counters). */
static uint32_t add_local(struct compiler *c, const struct mvm_token *t)
{
	if (t && find_local(c, t) >= 0)
		error_at(c, t, "'%.*s' is already declared in this function", (int)t->length,
			 t->text);
	if (c->fn->local_count == MAX_LOCALS)
		error_at(c, t ? t : &c->prev, "more than %d variables in one function", MAX_LOCALS);
	c->locals[c->fn->local_count].name = t ? t->text : NULL;
	c->locals[c->fn->local_count].length = t ? t->length : 0;
	return c->fn->local_count++;
}

/* The function called name, created (undefined yet) on first mention. */
static struct mvm_function *function_named(struct compiler *c, const struct mvm_token *t)
{
	struct mvm_program *p = c->prog;
	struct mvm_function *fn;
	uint32_t i;

	for (i = 1; i < p->function_count; i++)
		if (strlen(p->functions[i]->name) == t->length &&
		    !memcmp(p->functions[i]->name, t->text, t->length))
			return p->functions[i];
	if (p->function_count == p->function_cap) {
		p->function_cap = p->function_cap ? p->function_cap * 2 : 8;
		p->functions = xrealloc(c, p->functions, p->function_cap * sizeof(*p->functions));
		c->refs = xrealloc(c, c->refs, p->function_cap * sizeof(*c->refs));
	}
	fn = calloc(1, sizeof(*fn));
	if (!fn || !(fn->name = strndup(t->text, t->length)))
		error_at(c, t, "out of memory");
	fn->index = p->function_count;
	c->refs[fn->index] = *t;
	p->functions[p->function_count++] = fn;
	return fn;
}

static void expression(struct compiler *c);
static void enter(struct compiler *c);

static uint32_t arguments(struct compiler *c)
{
	uint32_t argc = 0;

	if (!accept(c, MVM_TOK_RPAREN)) {
		do {
			expression(c);
			argc++;
		} while (accept(c, MVM_TOK_COMMA));
		expect(c, MVM_TOK_RPAREN, "after the arguments");
	}
	return argc;
}

static void builtin_call(struct compiler *c, struct mvm_token name, unsigned op, uint32_t want)
{
	uint32_t argc = arguments(c);

	if (argc != want)
		error_at(c, &name, "%.*s() takes %u argument%s, not %u", (int)name.length,
			 name.text, want, want == 1 ? "" : "s", argc);
	emit_at(c, &name, op, 0, 0);
}

static void primary(struct compiler *c)
{
	struct mvm_token t = c->tok;

	if (accept(c, MVM_TOK_INT)) {
		emit_at(c, &t, MVM_OP_CONST, 0, t.value);
	} else if (accept(c, MVM_TOK_LPAREN)) {
		expression(c);
		expect(c, MVM_TOK_RPAREN, "to close '('");
	} else if (accept(c, MVM_TOK_IDENT)) {
		int slot = find_local(c, &t);

		if (slot < 0 && c->tok.kind == MVM_TOK_LPAREN) {
			if (name_is(&t, "array")) {
				next(c);
				builtin_call(c, t, MVM_OP_NEWARRAY, 1);
				return;
			}
			if (name_is(&t, "len")) {
				next(c);
				builtin_call(c, t, MVM_OP_LEN, 1);
				return;
			}
			if (name_is(&t, "jit_flush")) {
				next(c);
				builtin_call(c, t, MVM_OP_FLUSH, 0);
				return;
			}
		}
		if (slot >= 0)
			emit_at(c, &t, MVM_OP_LOAD, slot, 0);
		else
			emit_at(c, &t, MVM_OP_FUNC, (int32_t)function_named(c, &t)->index, 0);
	} else {
		error_at(c, &t, "expected an expression, found %s", mvm_token_describe(t.kind));
	}
}

/* Calls and indexing: f(x), a[i], and any chain of them. */
static void postfix(struct compiler *c)
{
	primary(c);
	for (;;) {
		struct mvm_token t = c->tok;

		if (accept(c, MVM_TOK_LPAREN)) {
			uint32_t argc = arguments(c);

			emit_at(c, &t, MVM_OP_CALL, (int32_t)argc, 0);
		} else if (accept(c, MVM_TOK_LBRACKET)) {
			expression(c);
			expect(c, MVM_TOK_RBRACKET, "after the index");
			emit_at(c, &t, MVM_OP_INDEX, 0, 0);
		} else {
			return;
		}
	}
}

static void unary(struct compiler *c)
{
	struct mvm_token t = c->tok;

	if (accept(c, MVM_TOK_MINUS)) {
		enter(c);
		unary(c);
		c->nesting--;
		emit_at(c, &t, MVM_OP_NEG, 0, 0);
	} else if (accept(c, MVM_TOK_BANG)) {
		enter(c);
		unary(c);
		c->nesting--;
		emit_at(c, &t, MVM_OP_NOT, 0, 0);
	} else {
		postfix(c);
	}
}

/* Binary operators by precedence level, loosest first. */
static const struct {
	enum mvm_token_kind tok;
	unsigned op;
	int level;
} binary_ops[] = {
	{MVM_TOK_EQ, MVM_OP_EQ, 0}, {MVM_TOK_NE, MVM_OP_NE, 0},
	{MVM_TOK_LT, MVM_OP_LT, 1}, {MVM_TOK_LE, MVM_OP_LE, 1},
	{MVM_TOK_GT, MVM_OP_GT, 1}, {MVM_TOK_GE, MVM_OP_GE, 1},
	{MVM_TOK_PLUS, MVM_OP_ADD, 2}, {MVM_TOK_MINUS, MVM_OP_SUB, 2},
	{MVM_TOK_STAR, MVM_OP_MUL, 3}, {MVM_TOK_SLASH, MVM_OP_DIV, 3},
	{MVM_TOK_PERCENT, MVM_OP_MOD, 3},
};
#define TOP_LEVEL 4

static void binary(struct compiler *c, int level)
{
	if (level == TOP_LEVEL) {
		unary(c);
		return;
	}
	binary(c, level + 1);
	for (;;) {
		struct mvm_token t = c->tok;
		size_t i;
		int found = -1;

		for (i = 0; i < sizeof(binary_ops) / sizeof(binary_ops[0]); i++)
			if (binary_ops[i].level == level && binary_ops[i].tok == t.kind)
				found = (int)i;
		if (found < 0)
			return;
		next(c);
		binary(c, level + 1);
		emit_at(c, &t, binary_ops[found].op, 0, 0);
	}
}

static void enter(struct compiler *c)
{
	if (++c->nesting > MAX_NESTING)
		error_at(c, &c->tok, "nested more than %d levels deep", MAX_NESTING);
}

static void expression(struct compiler *c)
{
	enter(c);
	binary(c, 0);
	c->nesting--;
}

static void block(struct compiler *c);
static void statement(struct compiler *c);

static void patch_jump(struct compiler *c, uint32_t at)
{
	c->fn->code[at].arg = (int32_t)c->fn->code_len;
}

static void if_statement(struct compiler *c)
{
	uint32_t jump_false, jump_end;

	enter(c); /* "else if" chains recurse */
	expect(c, MVM_TOK_LPAREN, "after 'if'");
	expression(c);
	expect(c, MVM_TOK_RPAREN, "after the condition");
	jump_false = emit(c, MVM_OP_JUMP_IF_FALSE, 0);
	block(c);
	if (accept(c, MVM_TOK_ELSE)) {
		jump_end = emit(c, MVM_OP_JUMP, 0);
		patch_jump(c, jump_false);
		if (accept(c, MVM_TOK_IF))
			if_statement(c);
		else
			block(c);
		patch_jump(c, jump_end);
	} else {
		patch_jump(c, jump_false);
	}
	c->nesting--;
}

/* header: cond; JUMP_IF_FALSE end; [ITER counter]; body; LOOP header; end:
 * Loops of the top level that are not inside another loop are the "outermost" loops whose
 * iterations are reported as events; a hidden local counts them. */
static void while_statement(struct compiler *c)
{
	struct mvm_token at = c->prev;
	int outermost = c->fn->index == 0 && c->loop_nesting == 0;
	uint32_t header, exit_jump, counter = 0;

	if (outermost) {
		counter = add_local(c, NULL);
		emit_at(c, &at, MVM_OP_CONST, 0, 0);
		emit_at(c, &at, MVM_OP_STORE, (int32_t)counter, 0);
	}
	header = c->fn->code_len;
	expect(c, MVM_TOK_LPAREN, "after 'while'");
	expression(c);
	expect(c, MVM_TOK_RPAREN, "after the condition");
	exit_jump = emit_at(c, &at, MVM_OP_JUMP_IF_FALSE, 0, 0);
	if (outermost)
		emit_at(c, &at, MVM_OP_ITER, (int32_t)counter, 0);
	c->loop_nesting++;
	block(c);
	c->loop_nesting--;
	emit_at(c, &at, MVM_OP_LOOP, (int32_t)header, 0);
	patch_jump(c, exit_jump);
}

/* An expression statement, or an assignment when '=' follows a variable or an a[i]: the
 * load just emitted becomes the store. */
static void expression_statement(struct compiler *c)
{
	struct mvm_token start = c->tok, eq;
	struct mvm_insn last;

	expression(c);
	eq = c->tok;
	if (!accept(c, MVM_TOK_ASSIGN)) {
		expect(c, MVM_TOK_SEMICOLON, "after the expression");
		emit(c, MVM_OP_POP, 0);
		return;
	}
	last = c->fn->code[c->fn->code_len - 1];
	if (last.op != MVM_OP_LOAD && last.op != MVM_OP_INDEX)
		error_at(c, &start, "only a variable or an element a[i] can be assigned");
	c->fn->code_len--;
	c->depth -= (uint32_t)stack_effect(last.op, 0);
	expression(c);
	if (last.op == MVM_OP_LOAD)
		emit_at(c, &eq, MVM_OP_STORE, last.arg, 0);
	else
		emit_at(c, &eq, MVM_OP_STORE_INDEX, 0, 0);
	expect(c, MVM_TOK_SEMICOLON, "after the assignment");
}

static void statement(struct compiler *c)
{
	struct mvm_token t = c->tok;

	if (accept(c, MVM_TOK_VAR)) {
		struct mvm_token name = c->tok;

		expect(c, MVM_TOK_IDENT, "after 'var'");
		expect(c, MVM_TOK_ASSIGN, "after the variable's name");
		expression(c);
		expect(c, MVM_TOK_SEMICOLON, "after the declaration");
		emit_at(c, &name, MVM_OP_STORE, (int32_t)add_local(c, &name), 0);
	} else if (accept(c, MVM_TOK_IF)) {
		if_statement(c);
	} else if (accept(c, MVM_TOK_WHILE)) {
		while_statement(c);
	} else if (accept(c, MVM_TOK_RETURN)) {
		if (c->tok.kind == MVM_TOK_SEMICOLON)
			emit_at(c, &t, MVM_OP_CONST, 0, 0);
		else
			expression(c);
		expect(c, MVM_TOK_SEMICOLON, "after 'return'");
		emit_at(c, &t, MVM_OP_RETURN, 0, 0);
	} else if (accept(c, MVM_TOK_PRINT)) {
		expression(c);
		expect(c, MVM_TOK_SEMICOLON, "after 'print'");
		emit_at(c, &t, MVM_OP_PRINT, 0, 0);
	} else if (c->tok.kind == MVM_TOK_LBRACE) {
		block(c);
	} else if (c->tok.kind == MVM_TOK_FUNC) {
		error_at(c, &t, "functions are defined at the top level only");
	} else {
		expression_statement(c);
	}
}

static void block(struct compiler *c)
{
	enter(c);
	expect(c, MVM_TOK_LBRACE, "to start a block");
	while (!accept(c, MVM_TOK_RBRACE)) {
		if (c->tok.kind == MVM_TOK_EOF)
			error_at(c, &c->tok, "expected '}' before the end of the file");
		statement(c);
	}
	c->nesting--;
}

static void end_function(struct compiler *c)
{
	emit_at(c, &c->prev, MVM_OP_CONST, 0, 0);
	emit_at(c, &c->prev, MVM_OP_RETURN, 0, 0);
}

static void function_definition(struct compiler *c)
{
	struct mvm_token name = c->tok;
	struct mvm_function *outer = c->fn, *fn;
	struct local saved[MAX_LOCALS];
	uint32_t saved_depth = c->depth;

	expect(c, MVM_TOK_IDENT, "after 'func'");
	if (name_is(&name, "array") || name_is(&name, "len") || name_is(&name, "jit_flush"))
		error_at(c, &name, "'%.*s' is a built-in function", (int)name.length, name.text);
	fn = function_named(c, &name);
	if (fn->defined)
		error_at(c, &name, "function '%s' is already defined", fn->name);
	fn->defined = 1;
	fn->line = name.line;
	fn->column = name.column;
	memcpy(saved, c->locals, outer->local_count * sizeof(saved[0]));
	c->fn = fn;
	c->depth = 0;
	expect(c, MVM_TOK_LPAREN, "after the function's name");
	if (!accept(c, MVM_TOK_RPAREN)) {
		do {
			struct mvm_token p = c->tok;

			expect(c, MVM_TOK_IDENT, "as a parameter name");
			add_local(c, &p);
			fn->param_count++;
		} while (accept(c, MVM_TOK_COMMA));
		expect(c, MVM_TOK_RPAREN, "after the parameters");
	}
	block(c);
	end_function(c);
	c->fn = outer;
	c->depth = saved_depth;
	memcpy(c->locals, saved, outer->local_count * sizeof(saved[0]));
}

void mvm_program_free(struct mvm_program *p)
{
	uint32_t i;

	if (!p)
		return;
	for (i = 0; i < p->function_count; i++) {
		free(p->functions[i]->name);
		free(p->functions[i]->code);
		free(p->functions[i]->pcs);
		free(p->functions[i]);
	}
	free(p->functions);
	free(p);
}

struct mvm_program *mvm_compile(const char *path, const char *source, size_t size)
{
	struct compiler *c = calloc(1, sizeof(*c));
	/* volatile: p is used after a longjmp back from a compile error. */
	struct mvm_program *volatile p = calloc(1, sizeof(*p));
	struct mvm_token main_name = {.text = "main", .length = 4, .line = 1, .column = 1};
	uint32_t i;

	if (!c || !p) {
		fprintf(stderr, "%s: out of memory\n", path);
		free(c);
		free(p);
		return NULL;
	}
	p->path = path;
	c->prog = p;
	if (setjmp(c->fail)) {
		free(c->refs);
		free(c);
		mvm_program_free(p);
		return NULL;
	}
	/* The top level is function 0; its name cannot clash with a user's "main" because
	 * function_named only looks at functions 1 and up. */
	c->fn = function_named(c, &main_name);
	c->fn->defined = 1;
	c->fn->line = c->fn->column = 1; /* the top level starts the file */
	mvm_lexer_init(&c->lx, source, size);
	next(c);
	while (c->tok.kind != MVM_TOK_EOF) {
		if (accept(c, MVM_TOK_FUNC))
			function_definition(c);
		else
			statement(c);
	}
	end_function(c);
	for (i = 1; i < p->function_count; i++)
		if (!p->functions[i]->defined)
			error_at(c, &c->refs[i], "'%s' is neither a variable nor a function",
				 p->functions[i]->name);
	free(c->refs);
	free(c);
	return p;
}
