/* Compiled with -pedantic-errors: the public header must be clean C99 and C11. */
#include <memplan.h>
#include <string.h>

int main(void)
{
	return strcmp(MEMPLAN_ENV_MODE, "MEMPLAN_MODE") != 0 || MEMPLAN_PLAN_FORMAT_VERSION < 1;
}
