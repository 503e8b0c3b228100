// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86-64 kprobes: what decoding a whole function tells the probe checks.
 *
 * x86 instructions have no fixed length: whether an address starts an
 * instruction is known only by decoding from the function's entry, and
 * whether a jump may replace a region also needs every jump in the
 * function and every fault fixup into it. Done per probe, that costs
 * O(function size) for each one, and probing every line of a large
 * function costs its size times the number of lines.
 *
 * So a function is decoded once, into a map kept for later probes in it:
 * one bit per byte for where instructions start, where a jump or a fault
 * fixup may land, and which instructions may fault to a fixup. The map
 * describes the original text (kprobe_read_original()), which our own
 * probes never change; what others may change later is handled as:
 *
 *  - Jump labels turn a two- or five-byte nop into a jump and back. A
 *    jump found when decoding stays a landing (a harmless refusal if it
 *    becomes a nop again); the offsets of nops of those sizes are kept,
 *    and read again each time a region is checked.
 *  - A debugger's int3 hides the byte it replaced: decoding stops there,
 *    and the map is used for that one check and not kept (kgdb removes
 *    its breakpoints again).
 *  - Text that is freed (a module going, init text) drops the maps in it
 *    (arch_kprobe_text_gone()), so that text loaded there later is
 *    decoded afresh. So a map is kept only for text whose going the core
 *    will hear of (kprobe_hears_text_gone()): the kernel's, and a
 *    module's once kprobes was told it is coming. A module whose load
 *    fails before that is freed without a word to kprobes, and the maps
 *    of its text are used for one check each and not kept. (The core
 *    probes no other text: BPF programs, say, are refused.)
 *
 * At most FUNC_MAPS_KEPT maps are kept, the least recently used dropped
 * first. Everything here runs with kprobe_mutex held, which guards the
 * list and the maps.
 */

#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/extable.h>
#include <linux/module.h>
#include <linux/bitmap.h>
#include <linux/kgdb.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/lockdep.h>

#include <asm/insn.h>
#include <asm/sections.h>
#include <asm/text-patching.h>

#include "common.h"

#define FUNC_MAPS_KEPT	64

/*
 * struct func_map - one function, decoded from its entry
 * @list: in func_maps, most recently used first
 * @start: the function's first byte
 * @size: its size in bytes
 * @decoded: bytes decoded: @size, or where decoding stopped (an
 *	instruction the decoder refused, or a debugger's int3)
 * @jumps_anywhere: an indirect jump (a jump table) may land anywhere in
 *	the function
 * @nr_nops: number of entries in @nops
 * @nops: offsets of two- and five-byte nops, which a jump label may make
 *	into jumps
 * @bits: three bitmaps of @size bits: instruction starts, landings (of
 *	a jump or a fault fixup), and instructions with a fault fixup
 */
struct func_map {
	struct list_head list;
	unsigned long start;
	unsigned long size;
	unsigned long decoded;
	bool jumps_anywhere;
	unsigned int nr_nops;
	unsigned int *nops;
	unsigned long bits[];
};

static LIST_HEAD(func_maps);
static unsigned int nr_func_maps;
/* The last map that was not kept: freed by the next lookup. */
static struct func_map *unkept_map;

static unsigned long *map_starts(struct func_map *map)
{
	return map->bits;
}

static unsigned long *map_landings(struct func_map *map)
{
	return map->bits + BITS_TO_LONGS(map->size);
}

static unsigned long *map_fixed_up(struct func_map *map)
{
	return map->bits + 2 * BITS_TO_LONGS(map->size);
}

static void free_func_map(struct func_map *map)
{
	kfree(map->nops);
	kvfree(map);
}

static void drop_func_map(struct func_map *map)
{
	list_del(&map->list);
	nr_func_maps--;
	free_func_map(map);
}

/* A debugger's int3 hides the instruction it replaced. */
static bool is_debugger_break(unsigned long addr)
{
#ifdef CONFIG_KGDB
	return kgdb_has_hit_break(addr);
#else
	return false;
#endif
}

/* Where a relative jump or call of @insn at @pc goes, or 0 for none. */
static unsigned long relative_target(struct insn *insn, unsigned long pc)
{
	switch (insn->opcode.bytes[0]) {
	case 0x70 ... 0x7f:	/* jcc rel8 */
	case 0xe0 ... 0xe3:	/* loop, jrcxz */
	case CALL_INSN_OPCODE:
	case JMP32_INSN_OPCODE:
	case JMP8_INSN_OPCODE:
		break;
	case 0x0f:
		if (insn->opcode.bytes[1] >= 0x80 && insn->opcode.bytes[1] <= 0x8f)
			break;	/* jcc rel32 */
		return 0;
	default:
		return 0;
	}
	return pc + insn->length + insn->immediate.value;
}

/*
 * With IBT a near indirect jmp lands only on an ENDBR, which no region
 * holds (see optimize.c), unless it has the notrack prefix. The kernel is then
 * built without jump tables (-fno-jump-tables, see arch/x86/Makefile):
 * such a jmp is a tail call. So is a jump to a retpoline thunk, which
 * alternatives may turn into a plain jmp through the register at boot.
 */
static bool lands_on_endbr_only(struct insn *insn)
{
	insn_byte_t prefix;
	int i;

	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT))
		return false;
	for_each_insn_prefix(insn, i, prefix)
		if (prefix == 0x3e)	/* notrack */
			return false;
	return true;
}

/*
 * May an indirect jump land anywhere in its function (a jump table)? A
 * far jmp through memory (ff /5) may; a near one through a register or
 * memory (ff /4), or a jump to a retpoline thunk, may unless it lands on
 * an ENDBR only.
 */
static bool is_indirect_jump(struct insn *insn, unsigned long pc,
			     unsigned long func, unsigned long func_end)
{
	char name[KSYM_NAME_LEN];
	unsigned long target;
	u8 op = insn->opcode.bytes[0];

	if (op == 0xff && X86_MODRM_REG(insn->modrm.bytes[0]) == 5)
		return true;
	if (op == 0xff && X86_MODRM_REG(insn->modrm.bytes[0]) == 4)
		return !lands_on_endbr_only(insn);
	if (op != JMP32_INSN_OPCODE && op != JMP8_INSN_OPCODE)
		return false;
	target = relative_target(insn, pc);
	if (target >= func && target < func_end)
		return false;
	/* Before the name lookup: every return (to a thunk) is such a jmp. */
	if (lands_on_endbr_only(insn))
		return false;
	return !lookup_symbol_name(target, name) &&
	       str_has_prefix(name, "__x86_indirect_");
}

/* A nop that a jump label may turn into a jump of the same size. */
static bool is_jump_label_nop(struct insn *insn)
{
	u8 op = insn->opcode.bytes[0];

	if (insn->length != 2 && insn->length != JMP32_INSN_SIZE)
		return false;
	return op == 0x90 || (op == 0x0f && insn->opcode.bytes[1] == 0x1f);
}

static int add_nop(struct func_map *map, unsigned int offset, unsigned int *room)
{
	unsigned int *nops;

	if (map->nr_nops == *room) {
		*room = max(8U, *room * 2);
		nops = krealloc_array(map->nops, *room, sizeof(*nops), GFP_KERNEL);
		if (!nops)
			return -ENOMEM;
		map->nops = nops;
	}
	map->nops[map->nr_nops++] = offset;
	return 0;
}

/* Note in @map where the instruction at @pc may send the CPU. */
static void add_landings(struct func_map *map, struct insn *insn, unsigned long pc)
{
	unsigned long end = map->start + map->size, target;
	const struct exception_table_entry *e;

	target = relative_target(insn, pc);
	if (target - map->start < map->size)
		__set_bit(target - map->start, map_landings(map));
	if (is_indirect_jump(insn, pc, map->start, end))
		map->jumps_anywhere = true;

	e = search_exception_tables(pc);
	if (!e)
		return;
	__set_bit(pc - map->start, map_fixed_up(map));
	target = (unsigned long)&e->fixup + e->fixup;
	if (target - map->start < map->size)
		__set_bit(target - map->start, map_landings(map));
}

/* Decode the function [@start, @start + @size) into a new map. */
static struct func_map *decode_function(unsigned long start, unsigned long size)
{
	unsigned int nops_room = 0;
	unsigned long pos;
	struct func_map *map;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	int ret;

	map = kvzalloc(struct_size(map, bits, 3 * BITS_TO_LONGS(size)), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->start = start;
	map->size = size;

	for (pos = 0; pos < size; pos += insn.length) {
		__set_bit(pos, map_starts(map));
		ret = kprobe_read_original(buf, start + pos);
		if (ret == -EBUSY) {
			/* A jump of ours in the text: nothing decoded can be trusted. */
			free_func_map(map);
			return ERR_PTR(ret);
		}
		if (ret || insn_decode_kernel(&insn, buf) < 0 || !insn.length)
			break;
		if (buf[0] == INT3_INSN_OPCODE) {
			if (is_debugger_break(start + pos))
				break;
			continue;	/* padding, or someone else's breakpoint */
		}
		if (is_jump_label_nop(&insn) && add_nop(map, pos, &nops_room)) {
			free_func_map(map);
			return ERR_PTR(-ENOMEM);
		}
		/* Only a jump over the region needs to know them. */
		if (IS_ENABLED(CONFIG_OPTPROBES))
			add_landings(map, &insn, start + pos);
	}
	map->decoded = min(pos, size);
	return map;
}

/*
 * The map of the function around @addr: ERR_PTR(-EINVAL) when kallsyms
 * knows no function there, -ENOMEM, -EBUSY when the text cannot be read
 * as it was (see kprobe_read_original()). Valid until the next call.
 */
static struct func_map *func_map_of(unsigned long addr)
{
	unsigned long start, size;
	struct func_map *map;

	if (unkept_map) {
		free_func_map(unkept_map);
		unkept_map = NULL;
	}
	list_for_each_entry(map, &func_maps, list) {
		if (addr - map->start < map->size) {
			list_move(&map->list, &func_maps);
			return map;
		}
	}

	if (!kprobe_function_bounds(addr, &start, &size) || !size)
		return ERR_PTR(-EINVAL);
	map = decode_function(start, size);
	if (IS_ERR(map))
		return map;
	/* A debugger's break goes away unannounced, as such text does. */
	if ((map->decoded < size && is_debugger_break(start + map->decoded)) ||
	    !kprobe_hears_text_gone(start)) {
		unkept_map = map;
		return map;
	}
	if (nr_func_maps == FUNC_MAPS_KEPT)
		drop_func_map(list_last_entry(&func_maps, struct func_map, list));
	list_add(&map->list, &func_maps);
	nr_func_maps++;
	return map;
}

/**
 * kprobe_insn_boundary() - does an instruction start at @addr?
 * @addr: a kernel text address, with kprobe_mutex held
 *
 * Return: 0 when one does, decoding from its function's entry; -EILSEQ
 * when none does or @addr is in no function; -ENOMEM.
 */
int kprobe_insn_boundary(unsigned long addr)
{
	struct func_map *map;

	kprobe_assert_mutex_held();
	map = func_map_of(addr);
	if (IS_ERR(map))
		return PTR_ERR(map) == -ENOMEM ? -ENOMEM : -EILSEQ;
	if (!test_bit(addr - map->start, map_starts(map)))
		return -EILSEQ;
	return 0;
}

/* Does a jump label, now a jump, go from @map's nops into (start, end)? */
static bool jump_label_lands_in(struct func_map *map, unsigned long start,
				unsigned long end)
{
	unsigned long pc, target;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;
	unsigned int i;

	for (i = 0; i < map->nr_nops; i++) {
		pc = map->start + map->nops[i];
		if (kprobe_read_original(buf, pc) || insn_decode_kernel(&insn, buf) < 0)
			return true;
		target = relative_target(&insn, pc);
		if (target > start && target < end)
			return true;
	}
	return false;
}

/**
 * kprobe_region_check() - may a jump replace [@start, @end)?
 * @start: the first instruction of the region, with kprobe_mutex held
 * @end: the end of its last instruction
 *
 * Nothing in the function may jump into the region except to its start,
 * no fault may be fixed up into it, and none of its instructions may be
 * one whose fault is fixed up (the fixup would look for it at its
 * original address).
 *
 * Return: 0 when that holds; -EBUSY when it does not; -ERANGE when the
 * region runs past the function's end; -EILSEQ when the function could
 * not be decoded to its end; -EINVAL when @start is in no function;
 * -ENOMEM.
 */
int kprobe_region_check(unsigned long start, unsigned long end)
{
	struct func_map *map;
	unsigned long first, last;

	kprobe_assert_mutex_held();
	map = func_map_of(start);
	if (IS_ERR(map))
		return kprobe_refuse(PTR_ERR(map), "the function cannot be looked up or decoded");
	if (end > map->start + map->size)
		return kprobe_refuse(-ERANGE, "the region runs past the function's end");
	if (map->decoded < map->size)
		return kprobe_refuse(-EILSEQ, "the function does not decode to its end");
	if (map->jumps_anywhere)
		return kprobe_refuse(-EBUSY, "an indirect jump in the function may land anywhere");
	first = start - map->start;
	last = end - map->start;
	if (find_next_bit(map_landings(map), last, first + 1) < last)
		return kprobe_refuse(-EBUSY, "a jump or a fault fixup lands inside the region");
	if (find_next_bit(map_fixed_up(map), last, first) < last)
		return kprobe_refuse(-EBUSY,
				     "an instruction in the region has an exception-table entry");
	if (jump_label_lands_in(map, start, end))
		return kprobe_refuse(-EBUSY, "a jump label's jump lands inside the region");
	return 0;
}

/**
 * arch_kprobe_text_gone() - drop the maps of text that is being freed
 * @start: first byte of the text
 * @end: the byte after it
 *
 * Called with kprobe_mutex held.
 */
void arch_kprobe_text_gone(unsigned long start, unsigned long end)
{
	struct func_map *map, *next;

	kprobe_assert_mutex_held();
	list_for_each_entry_safe(map, next, &func_maps, list)
		if (map->start < end && start < map->start + map->size)
			drop_func_map(map);
}
