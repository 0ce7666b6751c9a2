"""A spec's shield on the decision path: the shield a spec configures, decisions released in event-time order, and
the shielded and intervention records (pure)."""
