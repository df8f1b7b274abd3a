/* Recorder test program: dies of SIGABRT after printing a line. jitflow record must exit
 * with 128 + 6, like a shell, and still write a decodable recording. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	printf("before abort\n");
	fflush(stdout);
	abort();
}
