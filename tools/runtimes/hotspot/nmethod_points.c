/* The places where control enters an nmethod other than at its start, as POINT records
 * whose passes reports count per compile id (enum jf_hotspot_point):
 *
 *  - an OSR nmethod is entered from the interpreter's loop at its OSR entry, once per
 *    transition (the code there moves the interpreter's frame into the compiled one, and
 *    no branch of the nmethod comes back to it);
 *  - a deoptimized frame returns into the nmethod's deopt handler (HotSpot replaced its
 *    return address), which jumps to DeoptimizationBlob: its passes are the frames of this
 *    nmethod deoptimized that way;
 *  - an nmethod made not entrant gets a 5-byte jump to the wrong-method stub over the
 *    first instruction of its verified entry (nmethod::make_not_entrant, which keeps that
 *    instruction 5 bytes or longer for it; OSR nmethods are not patched). A point at the
 *    instruction and one at its second byte: a run of the original instruction passes
 *    both (its block goes on past the instruction), a run of the jump only the first (a
 *    direct jump ends the block), so their difference counts the calls the patched entry
 *    turned away. */
#include "agent.h"
#include "jitflow/zone_format.h"
#include "nmethod_header.h"

static void point(uint64_t compile_id, uint64_t addr, enum jf_hotspot_point id)
{
	if (addr)
		jf_emit_point(jf_hs_emitter, compile_id, addr, id, JF_POINT_ENTRY);
}

void jf_hs_emit_nmethod_points(const struct jf_nmethod_facts *nm, uint64_t start, uint64_t size)
{
	uint64_t c = (uint64_t)nm->compile_id;

	/* Addresses outside the described code would count another region's passes. */
	if (nm->osr_bci >= 0 && nm->osr_entry - start < size)
		point(c, nm->osr_entry, JF_HOTSPOT_OSR_ENTRY);
	if (nm->osr_bci < 0 && nm->verified_entry - start + 1 < size) {
		point(c, nm->verified_entry, JF_HOTSPOT_VERIFIED_ENTRY);
		point(c, nm->verified_entry + 1, JF_HOTSPOT_ENTRY_BODY);
	}
	if (nm->deopt_handler - start < size)
		point(c, nm->deopt_handler, JF_HOTSPOT_DEOPT_HANDLER);
	if (nm->deopt_mh_handler - start < size && nm->deopt_mh_handler != nm->deopt_handler)
		point(c, nm->deopt_mh_handler, JF_HOTSPOT_DEOPT_MH_HANDLER);
}
