/* Zone files that a perf.data names: a runtime's executable mapping of its jit-PID.dump
 * (jitflow's emitter and perf's own jvmti agent make one, so that perf learns of the file)
 * shows in the sideband as an MMAP record. Each such file is added to the zone image when
 * its record goes by, looked up next to the perf.data first (where `perf inject --jit`
 * users copy it) and then at the recorded path. */
#ifndef JITFLOW_CLI_ZONES_H
#define JITFLOW_CLI_ZONES_H

#include "jitflow/perf_session.h"
#include "jitflow/zone_image.h"

struct jf_cli_zone_discovery;

/* Wrap hooks (their on_record still runs first); zones receives the files found. */
struct jf_cli_zone_discovery *jf_cli_zone_discovery_new(const char *perf_path,
							struct jf_zone_image *zones,
							struct jf_perf_session_hooks *hooks);
/* A zone file of this base name is already in the zone image: do not add it again. */
void jf_cli_zone_discovery_seen(struct jf_cli_zone_discovery *d, const char *base_name);
/* Files found so far. */
size_t jf_cli_zone_discovery_found(const struct jf_cli_zone_discovery *d);
void jf_cli_zone_discovery_free(struct jf_cli_zone_discovery *d);

#endif
