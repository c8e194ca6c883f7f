"""Multi-constraint scheduling in the style of NATURAL PLAN: calendar, meeting and trip planning."""
