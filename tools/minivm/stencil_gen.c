/* stencil_gen: build-time tool that turns the object file compiled from stencils.c into a
 * C table (stencil_table.c) and an enum (stencil_ids.h) for minivm's copy-and-patch JIT.
 *
 * It reads the object with libelf: every function named mvm_stencil_NAME (one per section,
 * -ffunction-sections), its bytes, and the relocations of its section, which become holes.
 * Only the relocation kinds the JIT knows how to patch are accepted; anything else (a
 * reference to .rodata, a call to a libc function) stops the build with a message, because
 * the copied code would not work. Capstone checks that each guard's hole is a conditional
 * branch and that guard stencils leave the machine stack alone. The object's machine
 * (x86-64 here, AArch64 in stencil_gen_a64.c) says which relocations and branches those are.
 *
 * usage: stencil_gen STENCILS.o OUT_TABLE.c OUT_IDS.h */
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stencil_gen.h"

#define PREFIX "mvm_stencil_"
#define MAX_STENCILS 128

static const char *object_path;
static const struct stencil_arch *arch;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "stencil_gen: %s: ", object_path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

int hole_symbol(const char *symbol)
{
	static const char *const names[] = {
		[MVM_HOLE_OP0] = "_JF_OP0", [MVM_HOLE_OP1] = "_JF_OP1", [MVM_HOLE_OP2] = "_JF_OP2",
		[MVM_HOLE_CONTINUE] = "_JF_CONTINUE", [MVM_HOLE_TARGET] = "_JF_TARGET",
		[MVM_HOLE_EXIT] = "_JF_EXIT",
	};
	int k;

	for (k = 0; k < (int)(sizeof(names) / sizeof(names[0])); k++)
		if (!strcmp(symbol, names[k]))
			return k;
	return -1;
}

/* Operands are movabs immediates (R_X86_64_64); jumps and the guard's jnz rel32. */
static int hole_of_x86_64(const char *symbol, unsigned type, int64_t addend,
			  struct mvm_hole *hole)
{
	int kind = hole_symbol(symbol);

	hole->part = 0;
	if (kind >= MVM_HOLE_OP0 && kind <= MVM_HOLE_OP2 && !(type == R_X86_64_64 && addend == 0))
		kind = -1;
	if (kind >= MVM_HOLE_CONTINUE &&
	    !((type == R_X86_64_PLT32 || type == R_X86_64_PC32) && addend == -4))
		kind = -1;
	hole->kind = (uint32_t)kind;
	return kind;
}

static const char *section_name(Elf *elf, size_t index)
{
	Elf_Scn *scn = elf_getscn(elf, index);
	size_t names;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &names))
		return NULL;
	return elf_strptr(elf, names, sh.sh_name);
}

static void read_holes(Elf *elf, struct stencil *s, Elf_Data *symbols, size_t strtab)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_info != s->section)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			const char *name;
			struct mvm_hole hole;

			if (!gelf_getrela(data, (int)i, &rela) ||
			    !gelf_getsym(symbols, (int)GELF_R_SYM(rela.r_info), &sym))
				die("%s: unreadable relocation %zu", s->name, i);
			name = elf_strptr(elf, strtab, sym.st_name);
			if (GELF_ST_TYPE(sym.st_info) == STT_SECTION)
				name = section_name(elf, sym.st_shndx); /* e.g. .rodata: data */
			if (arch->hole_of(name ? name : "", (unsigned)GELF_R_TYPE(rela.r_info),
					  rela.r_addend, &hole) < 0)
				die("%s+0x%lx: relocation type %u against '%s' (addend %ld) is not a hole "
				    "the JIT can patch; keep stencils free of data and calls",
				    s->name, (unsigned long)rela.r_offset,
				    (unsigned)GELF_R_TYPE(rela.r_info), name ? name : "?",
				    (long)rela.r_addend);
			if (s->hole_count == MAX_HOLES)
				die("%s: more than %d holes", s->name, MAX_HOLES);
			hole.offset = (uint32_t)rela.r_offset;
			s->holes[s->hole_count++] = hole;
		}
	}
}

/* A guard's hole must be the displacement of a jcc rel32 (0F 80..8F). */
static void check_holes_x86_64(const struct stencil *s)
{
	uint32_t h;

	for (h = 0; h < s->hole_count; h++) {
		uint32_t at = s->holes[h].offset;

		if (s->holes[h].kind == MVM_HOLE_EXIT &&
		    (at < 2 || s->code[at - 2] != 0x0f || (s->code[at - 1] & 0xf0) != 0x80))
			die("%s+0x%x: exit hole is not a conditional branch", s->name, at);
	}
}

static int moves_stack_x86_64(const cs_insn *insn)
{
	uint8_t r;

	for (r = 0; r < insn->detail->regs_write_count; r++)
		if (insn->detail->regs_write[r] == X86_REG_RSP)
			return 1;
	return 0;
}

/* The holes are where the architecture wants them, every byte is an instruction, and
 * nothing in a guard stencil moves the stack pointer: its exit stub returns to the
 * interpreter. */
static void check_stencil(csh cs, const struct stencil *s)
{
	cs_insn *insn;
	size_t count, i;
	uint32_t h;
	int has_exit = 0;

	arch->check_holes(s);
	for (h = 0; h < s->hole_count; h++)
		has_exit |= s->holes[h].kind == MVM_HOLE_EXIT;
	count = cs_disasm(cs, s->code, s->size, 0, 0, &insn);
	if (count == 0)
		die("%s: capstone cannot disassemble it", s->name);
	if (insn[count - 1].address + insn[count - 1].size != s->size)
		die("%s: not all bytes are instructions", s->name);
	for (i = 0; has_exit && i < count; i++)
		if (arch->moves_stack(&insn[i]))
			die("%s+0x%lx: '%s %s' moves the stack in a guard stencil", s->name,
			    (unsigned long)insn[i].address, insn[i].mnemonic, insn[i].op_str);
	cs_free(insn, count);
}

/* A last instruction "jmp CONTINUE" (E9 rel32) can fall through into the next stencil. */
static int32_t tail_jump_x86_64(const struct stencil *s)
{
	uint32_t j;

	for (j = 0; j < s->hole_count; j++)
		if (s->holes[j].kind == MVM_HOLE_CONTINUE && s->holes[j].offset + 4 == s->size &&
		    s->size >= 5 && s->code[s->size - 5] == 0xe9)
			return (int32_t)s->size - 5;
	return -1;
}

const struct stencil_arch stencil_arch_x86_64 = {
	CS_ARCH_X86, CS_MODE_64, hole_of_x86_64, check_holes_x86_64, moves_stack_x86_64,
	tail_jump_x86_64,
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct stencil *)a)->name, ((const struct stencil *)b)->name);
}

static void write_outputs(struct stencil *st, size_t n, const char *table_path,
			  const char *ids_path)
{
	FILE *ids = fopen(ids_path, "w"), *tab = fopen(table_path, "w");
	size_t i;
	uint32_t j;

	if (!ids || !tab)
		die("cannot write %s / %s", table_path, ids_path);
	fprintf(ids, "/* Generated by stencil_gen from stencils.c; do not edit. */\n"
		     "#ifndef MVM_STENCIL_IDS_H\n#define MVM_STENCIL_IDS_H\n"
		     "enum mvm_stencil_id {\n");
	for (i = 0; i < n; i++)
		fprintf(ids, "\tMVM_ST_%s,\n", st[i].name);
	fprintf(ids, "\tMVM_ST_COUNT\n};\n#endif\n");

	fprintf(tab, "/* Generated by stencil_gen from stencils.c's object file; do not edit. */\n"
		     "#include \"stencils.h\"\n\n");
	for (i = 0; i < n; i++) {
		fprintf(tab, "static const uint8_t code_%s[] = {", st[i].name);
		for (j = 0; j < st[i].size; j++)
			fprintf(tab, "%s0x%02x,", j % 12 ? " " : "\n\t", st[i].code[j]);
		fprintf(tab, "\n};\nstatic const struct mvm_hole holes_%s[] = {", st[i].name);
		for (j = 0; j < st[i].hole_count; j++)
			fprintf(tab, "\n\t{%u, %u, %u},", st[i].holes[j].offset,
				st[i].holes[j].kind, st[i].holes[j].part);
		if (!st[i].hole_count)
			fprintf(tab, "{0, 0, 0}");
		fprintf(tab, "\n};\n\n");
	}
	fprintf(tab, "const struct mvm_stencil mvm_stencils[MVM_ST_COUNT] = {\n");
	for (i = 0; i < n; i++) {
		int32_t tail = arch->tail_jump(&st[i]);

		fprintf(tab, "\t[MVM_ST_%s] = {\"%s\", code_%s, %u, %u, %d, holes_%s, %u},\n",
			st[i].name, st[i].name, st[i].name, st[i].size,
			tail >= 0 ? (uint32_t)tail : st[i].size, tail, st[i].name, st[i].hole_count);
	}
	fprintf(tab, "};\n");
	if (fclose(ids) || fclose(tab))
		die("cannot write %s / %s", table_path, ids_path);
}

int main(int argc, char **argv)
{
	static struct stencil stencils[MAX_STENCILS];
	size_t count = 0, strtab = 0, i, nsyms = 0;
	Elf_Data *symbols = NULL;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	Elf *elf;
	csh cs;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: stencil_gen STENCILS.o OUT_TABLE.c OUT_IDS.h\n");
		return 2;
	}
	object_path = argv[1];
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf: %s", elf_errmsg(-1));
	fd = open(object_path, O_RDONLY);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF)
		die("not a readable ELF object");
	if (!gelf_getehdr(elf, &ehdr))
		die("not a readable ELF object");
	if (ehdr.e_machine == EM_X86_64)
		arch = &stencil_arch_x86_64;
	else if (ehdr.e_machine == EM_AARCH64)
		arch = &stencil_arch_aarch64;
	else
		die("machine %u: stencils exist for x86-64 and AArch64", (unsigned)ehdr.e_machine);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			symbols = elf_getdata(scn, NULL);
			strtab = sh.sh_link;
			nsyms = sh.sh_size / sh.sh_entsize;
		}
	}
	if (!symbols)
		die("no symbol table");
	for (i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		struct stencil *s;

		if (!gelf_getsym(symbols, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, strtab, sym.st_name);
		if (!name || strncmp(name, PREFIX, strlen(PREFIX)))
			continue;
		if (count == MAX_STENCILS)
			die("more than %d stencils", MAX_STENCILS);
		s = &stencils[count++];
		snprintf(s->name, sizeof(s->name), "%s", name + strlen(PREFIX));
		s->section = sym.st_shndx;
		scn = elf_getscn(elf, sym.st_shndx);
		if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
			die("%s: no section", name);
		if (sym.st_value != 0 || sym.st_size == 0 || sym.st_size > data->d_size)
			die("%s: expected alone in its section (compile with -ffunction-sections)",
			    name);
		s->size = (uint32_t)sym.st_size;
		s->code = malloc(s->size);
		if (!s->code)
			die("out of memory");
		memcpy(s->code, data->d_buf, s->size);
	}
	if (!count)
		die("no %s* functions", PREFIX);
	if (cs_open(arch->cs_arch, arch->cs_mode, &cs) != CS_ERR_OK)
		die("capstone cannot open the object's architecture");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (i = 0; i < count; i++) {
		read_holes(elf, &stencils[i], symbols, strtab);
		check_stencil(cs, &stencils[i]);
	}
	cs_close(&cs);
	qsort(stencils, count, sizeof(stencils[0]), by_name);
	write_outputs(stencils, count, argv[2], argv[3]);
	elf_end(elf);
	close(fd);
	return 0;
}
