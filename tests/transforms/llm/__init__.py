"""Tests of the LLM triplet extraction subsystem."""
