"""The block-coordinate framework: state, schedules, the scheduler, block contracts, parts
and their costs, and the validation of values. It knows no CAUSE-FS formula."""
