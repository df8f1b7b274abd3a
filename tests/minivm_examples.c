/* minivm's example programs, one by one (see minivm_examples.h). */
#include "minivm_examples.h"

#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

void jf_test_each_minivm_example(void (*check)(const char *name))
{
	char path[1024];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/tools/minivm/examples", jf_test_source_dir());
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char name[256];

		if (len < 5 || strcmp(e->d_name + len - 4, ".mvm") || len - 4 >= sizeof(name))
			continue;
		memcpy(name, e->d_name, len - 4);
		name[len - 4] = 0;
		check(name);
		n++;
	}
	closedir(d);
	assert_true(n >= 7);
}
