"""One folder per stage; each holds the stage's asset (and its checks)."""
