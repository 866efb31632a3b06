-- Foundation schema; written by the store owner.
SELECT 1;
