// exec actions (DESIGN.md §5), all of them: the pool that runs commands for
// records (exec_pool.h, with the job of one record in exec_job.h and one run
// of one command in child_process.h) and the splitting of --exec's command
// line (command_line.h). For callers that use both; new code includes the
// header of what it uses.
#pragma once

#include "output/command_line.h"
#include "output/exec_pool.h"
