/* Recorder test program: a fork whose child exits at once, and a posix_spawn (system) of
 * another program. The recorder does not follow either child; it must say so. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int status = 0, rc = system("exit 5");
	pid_t child = fork();

	if (child == 0)
		_exit(7);
	waitpid(child, &status, 0);
	printf("system=%d child=%d\n", WEXITSTATUS(rc), WEXITSTATUS(status));
	return 0;
}
