/* minivm's bytecode: a stack machine, one instruction per pc, with the source position of
 * each instruction kept for error messages and code-object line numbers. */
#ifndef MVM_BYTECODE_H
#define MVM_BYTECODE_H

#include <stdint.h>

#define MVM_OPCODES(X)                                                                   \
	X(CONST)       /* push imm */                                                    \
	X(LOAD)        /* push local[arg] */                                             \
	X(STORE)       /* local[arg] = pop */                                            \
	X(FUNC)        /* push function number arg */                                    \
	X(POP)                                                                           \
	X(ADD) X(SUB) X(MUL) X(DIV) X(MOD)                                               \
	X(LT) X(LE) X(GT) X(GE) X(EQ) X(NE)                                              \
	X(NEG) X(NOT)                                                                    \
	X(JUMP)        /* forward jump to arg */                                         \
	X(JUMP_IF_FALSE) /* pop; jump to arg if it is the integer 0 */                   \
	X(LOOP)        /* backward jump to the loop header arg: where hot loops are found */ \
	X(CALL)        /* callee and arg arguments on the stack -> result */             \
	X(RETURN)      /* pop the result and return it */                                \
	X(PRINT)       /* pop and print */                                               \
	X(NEWARRAY)    /* pop n, push an array of n zeros */                             \
	X(INDEX)       /* array, index -> element */                                     \
	X(STORE_INDEX) /* array, index, value -> (nothing) */                            \
	X(LEN)         /* array -> its length */                                         \
	X(ITER)        /* outermost-loop iteration mark; local[arg] counts them */        \
	X(FLUSH)       /* jit_flush(): drop all compiled code; pushes 0 */

enum mvm_opcode {
#define MVM_OPCODE_ENUM(name) MVM_OP_##name,
	MVM_OPCODES(MVM_OPCODE_ENUM)
#undef MVM_OPCODE_ENUM
	MVM_OP_COUNT
};

struct mvm_insn {
	uint8_t op;      /* enum mvm_opcode */
	int32_t arg;
	int64_t imm;
	uint32_t line, column;
};

const char *mvm_opcode_name(unsigned op);

#endif
