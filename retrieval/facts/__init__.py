"""The school's catalogue (majors, programmes, methods, combinations) and its facts tables
(cut-off scores, quotas, fees, accepted combinations by major, programme, method and year), read
from the tables of the knowledge base, each value with where it was found (issue 2/4)."""
