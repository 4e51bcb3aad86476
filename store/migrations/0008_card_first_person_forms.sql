-- 0008: a card's own declensions of its first person (persona.Card
-- FirstPersonForms, issue 14 item 2): NULL = none listed, otherwise a JSON
-- array of strings. Older rows read as none, so their runs judge as before.
ALTER TABLE character_card ADD COLUMN first_person_forms TEXT;
