"""Stage `retrieval_evaluation`: every strategy on LoCoMo / MuSiQue, and their comparison."""
