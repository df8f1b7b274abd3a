/* Reading a JSON file given on the command line. */
#include "cli_json.h"
#include "jitflow/mapped_file.h"

cJSON *jf_cli_load_json(const char *path, const char *expected, struct jf_error *err)
{
	struct jf_mapped_file f;
	const char *end = NULL;
	cJSON *doc;

	if (jf_map_file(&f, path, err) < 0)
		return NULL;
	doc = cJSON_ParseWithLengthOpts((const char *)f.data, f.size, &end, 0);
	if (!doc)
		jf_fail(err, "%s: offset %ld: not valid JSON (expected %s)", path,
			end && f.data ? (long)(end - (const char *)f.data) : 0L, expected);
	jf_unmap_file(&f);
	return doc;
}
