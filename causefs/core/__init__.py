"""The block-coordinate framework: fields and the state, schedules, the loop, stopping
rules, block contracts, parts and their costs, and the validation of values. It knows no
CAUSE-FS formula and names none of its variables: the parts declare the fields they own."""
