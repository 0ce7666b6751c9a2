"""Raw records read against a spec's input schema (the floor above `language`): validated into events, or
dead-lettered with the reason; the typed decoding of JSON records in one C pass where it is compiled."""
