/* JSON helpers for tests (json_check.h). */
#include "json_check.h"
#include "test_support.h"

#include <stdlib.h>

cJSON *jf_test_run_json(const char *cmd)
{
	char *out;
	cJSON *doc;

	if (jf_test_run(cmd, &out) != 0)
		fail_msg("failed: %s", cmd);
	doc = cJSON_Parse(out);
	free(out);
	if (!doc)
		fail_msg("not JSON: %s", cmd);
	return doc;
}

cJSON *jf_test_json_file(const char *path)
{
	char *text = jf_test_read_file(path, NULL);
	cJSON *doc = cJSON_Parse(text);

	free(text);
	if (!doc)
		fail_msg("%s: not JSON", path);
	return doc;
}

double jf_test_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("no number \"%s\"", key);
	return v->valuedouble;
}

const char *jf_test_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v))
		fail_msg("no string \"%s\"", key);
	return v->valuestring;
}
