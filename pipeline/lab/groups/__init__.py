"""Scale-out by Kafka consumer group: members' throughput and the pause a member joining or leaving costs."""
