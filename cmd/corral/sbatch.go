package main

const sbatchUsage = `Usage: corral sbatch [flags] SCRIPT [ARGS...]
       corral sbatch [flags] --wrap 'COMMAND'

Queues a batch script as sbatch does: its #SBATCH lines before its first
command are read (flags on the command line win), the job runs the copy
of the script taken now, and the answer is sbatch's ("Submitted batch
job j000017"; --parsable prints the ID alone, -W waits for the end and
exits with the job's code). As sbatch's, its output goes to
slurm-%j.out (slurm-%A_%a.out for an array) in the work directory unless
-o or -e says otherwise; corral logs has it too. Directives that mean nothing on one machine
are named on stderr with their line and ignored; those corral cannot
honour are refused. It takes every flag of corral submit (see
'corral submit -h' for what each means here: -G is GPUs per job, --mem
memory per job, as in Slurm).

  corral sbatch train.sbatch
  corral sbatch --array 0-99%10 sweep.sbatch
  jid=$(corral sbatch --parsable prep.sbatch); corral sbatch -d afterok:$jid train.sbatch
` + clientHelp + `
Flags:
`
