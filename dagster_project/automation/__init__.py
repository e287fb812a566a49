"""Operations as users run them: the inbox sensor, the nightly schedule, day partitions of
conversation logs, and backfills over collections with bounded concurrency.

The logic lives in plain modules (`fingerprints`, `inbox`, `days`, `backfill`); the Dagster
definitions that wrap it (`sensors`, `schedules`) only translate it into run requests.
"""
