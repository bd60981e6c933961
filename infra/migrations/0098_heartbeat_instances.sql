-- A service may run as several instances in one consumer group (`npcworld run --instances memory=2`,
-- compose replicas): each beats on a row of its own, so one instance's clean stop (which withdraws its row)
-- or its parking during a broker rotation says nothing about the others. `instance` is the process's static
-- group-member id (KAFKA_GROUP_INSTANCE_ID) or, without one, an id of the process.
ALTER TABLE consumer_heartbeats ADD COLUMN instance text NOT NULL DEFAULT '';
ALTER TABLE consumer_heartbeats DROP CONSTRAINT consumer_heartbeats_pkey;
ALTER TABLE consumer_heartbeats ADD PRIMARY KEY (consumer, instance);
