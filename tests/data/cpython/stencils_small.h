// A jit_stencils.h in the form CPython 3.13's Tools/jit writes it, cut down to what
// jitflow reads: the emit functions are left out, the initialisers kept (sizes invented).
void
emit__START_EXECUTOR(
    unsigned char *code, unsigned char *data, _PyExecutorObject *executor,
    const _PyUOpInstruction *instruction, uintptr_t instruction_starts[])
{
}

typedef struct {
    void (*emit)(
        unsigned char *code, unsigned char *data, _PyExecutorObject *executor,
        const _PyUOpInstruction *instruction, uintptr_t instruction_starts[]);
    size_t code_size;
    size_t data_size;
} StencilGroup;

static const StencilGroup trampoline = {emit_trampoline, 24, 8};

static const StencilGroup stencil_groups[MAX_UOP_ID + 1] = {
    [_COLD_EXIT] = {emit__COLD_EXIT, 208, 64},
    [_EXIT_TRACE] = {emit__EXIT_TRACE, 80, 16},
    [_FATAL_ERROR] = {emit__FATAL_ERROR, 16, 8},
    [_GUARD_IS_FALSE_POP] = {emit__GUARD_IS_FALSE_POP, 0, 0},
    [_START_EXECUTOR] = {emit__START_EXECUTOR, 32, 8},
};
