/* The installed header names the plan format version that the library reads and
 * writes: a plan file of any other version is refused. */
#include <memplan.h>
#include <stdio.h>

#include "plan_file.h"

int main(void)
{
	if (MEMPLAN_PLAN_FORMAT_VERSION == PLAN_FILE_VERSION)
		return 0;
	fprintf(stderr, "memplan.h says plan format %d, plan files are version %d\n",
		MEMPLAN_PLAN_FORMAT_VERSION, PLAN_FILE_VERSION);
	return 1;
}
