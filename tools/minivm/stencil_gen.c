/* stencil_gen: build-time tool that turns the object file compiled from stencils.c into a
 * C table (stencil_table.c) and an enum (stencil_ids.h) for minivm's copy-and-patch JIT.
 *
 * It reads the object with libelf: every function named mvm_stencil_NAME (one per section,
 * -ffunction-sections), its bytes, and the relocations of its section, which become holes.
 * Only the relocation kinds the JIT knows how to patch are accepted; anything else (a
 * reference to .rodata, a call to a libc function) stops the build with a message, because
 * the copied code would not work. Capstone checks that each guard's hole is the rel32 of a
 * conditional branch and that guard stencils leave the machine stack alone.
 *
 * usage: stencil_gen STENCILS.o OUT_TABLE.c OUT_IDS.h */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stencil_format.h"

#define PREFIX "mvm_stencil_"
#define MAX_STENCILS 128
#define MAX_HOLES 16

struct stencil {
	char name[64];
	size_t section;
	uint8_t *code;
	uint32_t size;
	struct mvm_hole holes[MAX_HOLES];
	uint32_t hole_count;
};

static const char *object_path;

__attribute__((format(printf, 1, 2))) static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "stencil_gen: %s: ", object_path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int hole_kind_of(const char *symbol, unsigned type, int64_t addend)
{
	if (type == R_X86_64_64 && addend == 0) {
		if (!strcmp(symbol, "_JF_OP0"))
			return MVM_HOLE_OP0;
		if (!strcmp(symbol, "_JF_OP1"))
			return MVM_HOLE_OP1;
		if (!strcmp(symbol, "_JF_OP2"))
			return MVM_HOLE_OP2;
	}
	if ((type == R_X86_64_PLT32 || type == R_X86_64_PC32) && addend == -4) {
		if (!strcmp(symbol, "_JF_CONTINUE"))
			return MVM_HOLE_CONTINUE;
		if (!strcmp(symbol, "_JF_TARGET"))
			return MVM_HOLE_TARGET;
		if (!strcmp(symbol, "_JF_EXIT"))
			return MVM_HOLE_EXIT;
	}
	return -1;
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
			int kind;

			if (!gelf_getrela(data, (int)i, &rela) ||
			    !gelf_getsym(symbols, (int)GELF_R_SYM(rela.r_info), &sym))
				die("%s: unreadable relocation %zu", s->name, i);
			name = elf_strptr(elf, strtab, sym.st_name);
			if (GELF_ST_TYPE(sym.st_info) == STT_SECTION)
				name = section_name(elf, sym.st_shndx); /* e.g. .rodata: data */
			kind = hole_kind_of(name ? name : "", (unsigned)GELF_R_TYPE(rela.r_info),
					    rela.r_addend);
			if (kind < 0)
				die("%s+0x%lx: relocation type %u against '%s' (addend %ld) is not a hole "
				    "the JIT can patch; keep stencils free of data and calls",
				    s->name, (unsigned long)rela.r_offset,
				    (unsigned)GELF_R_TYPE(rela.r_info), name ? name : "?",
				    (long)rela.r_addend);
			if (s->hole_count == MAX_HOLES)
				die("%s: more than %d holes", s->name, MAX_HOLES);
			s->holes[s->hole_count].offset = (uint32_t)rela.r_offset;
			s->holes[s->hole_count].kind = (uint32_t)kind;
			s->hole_count++;
		}
	}
}

/* A guard's hole must be the displacement of a jcc rel32 (0F 80..8F), and nothing in a
 * guard stencil may move the stack pointer: its exit stub returns to the interpreter. */
static void check_guards(csh cs, const struct stencil *s)
{
	cs_insn *insn;
	size_t count, i;
	uint32_t h;
	int has_exit = 0;

	for (h = 0; h < s->hole_count; h++) {
		uint32_t at = s->holes[h].offset;

		if (s->holes[h].kind != MVM_HOLE_EXIT)
			continue;
		has_exit = 1;
		if (at < 2 || s->code[at - 2] != 0x0f || (s->code[at - 1] & 0xf0) != 0x80)
			die("%s+0x%x: exit hole is not a conditional branch", s->name, at);
	}
	count = cs_disasm(cs, s->code, s->size, 0, 0, &insn);
	if (count == 0)
		die("%s: capstone cannot disassemble it", s->name);
	if (insn[count - 1].address + insn[count - 1].size != s->size)
		die("%s: not all bytes are instructions", s->name);
	for (i = 0; has_exit && i < count; i++) {
		const cs_detail *d = insn[i].detail;
		uint8_t r;

		for (r = 0; r < d->regs_write_count; r++)
			if (d->regs_write[r] == X86_REG_RSP)
				die("%s+0x%lx: '%s %s' moves the stack in a guard stencil", s->name,
				    (unsigned long)insn[i].address, insn[i].mnemonic, insn[i].op_str);
	}
	cs_free(insn, count);
}

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
			fprintf(tab, "\n\t{%u, %u},", st[i].holes[j].offset, st[i].holes[j].kind);
		if (!st[i].hole_count)
			fprintf(tab, "{0, 0}");
		fprintf(tab, "\n};\n\n");
	}
	fprintf(tab, "const struct mvm_stencil mvm_stencils[MVM_ST_COUNT] = {\n");
	for (i = 0; i < n; i++) {
		int32_t tail = -1;

		/* A last instruction "jmp CONTINUE" can fall through into the next stencil. */
		for (j = 0; j < st[i].hole_count; j++)
			if (st[i].holes[j].kind == MVM_HOLE_CONTINUE &&
			    st[i].holes[j].offset + 4 == st[i].size &&
			    st[i].code[st[i].size - 5] == 0xe9)
				tail = (int32_t)st[i].size - 5;
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
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		die("capstone cannot open x86-64");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (i = 0; i < count; i++) {
		read_holes(elf, &stencils[i], symbols, strtab);
		check_guards(cs, &stencils[i]);
	}
	cs_close(&cs);
	qsort(stencils, count, sizeof(stencils[0]), by_name);
	write_outputs(stencils, count, argv[2], argv[3]);
	elf_end(elf);
	close(fd);
	return 0;
}
