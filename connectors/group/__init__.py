"""A monitor job run by a Kafka consumer group (`fairstream run --group NAME`): processes join and leave at any time."""
