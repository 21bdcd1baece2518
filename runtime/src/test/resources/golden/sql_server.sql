-- schema.createSchema
IF SCHEMA_ID(N'dbo') IS NULL EXEC(N'CREATE SCHEMA dbo')

-- schema.migrationLock
{? = call sp_getapplock(?, 'Exclusive', 'Session', ?)}

-- schema.migrationUnlock
{? = call sp_releaseapplock(?, 'Session')}

-- schema.pc_events[0]
IF OBJECT_ID(N'dbo.pc_events', N'U') IS NULL
CREATE TABLE dbo.pc_events (
  seq_id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT pk_pc_events PRIMARY KEY CLUSTERED,
  id UNIQUEIDENTIFIER NOT NULL,
  stream_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  version BIGINT NOT NULL,
  type NVARCHAR(250) NOT NULL,
  data NVARCHAR(MAX) NOT NULL CONSTRAINT ck_pc_events_data CHECK (ISJSON(data) = 1),
  timestamp DATETIMEOFFSET NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_seq BIGINT NULL,
  correlation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL,
  causation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL,
  headers NVARCHAR(MAX) NULL CONSTRAINT ck_pc_events_headers CHECK (ISJSON(headers) = 1),
  CONSTRAINT uq_pc_events_stream_version UNIQUE (tenant_id, stream_id, version)
)

-- schema.pc_events[1]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_pc_events_tenant_seq' AND object_id = OBJECT_ID(N'dbo.pc_events'))
CREATE UNIQUE INDEX ux_pc_events_tenant_seq ON dbo.pc_events (tenant_id, tenant_seq) WHERE tenant_seq IS NOT NULL

-- schema.pc_events[2]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_events_correlation' AND object_id = OBJECT_ID(N'dbo.pc_events'))
CREATE INDEX ix_pc_events_correlation ON dbo.pc_events (tenant_id, correlation_id) WHERE correlation_id IS NOT NULL

-- schema.pc_streams
IF OBJECT_ID(N'dbo.pc_streams', N'U') IS NULL
CREATE TABLE dbo.pc_streams (
  id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  type NVARCHAR(250) NULL,
  version BIGINT NOT NULL,
  timestamp DATETIMEOFFSET NOT NULL,
  created DATETIMEOFFSET NOT NULL,
  archived BIT NOT NULL CONSTRAINT df_pc_streams_archived DEFAULT 0,
  CONSTRAINT pk_pc_streams PRIMARY KEY CLUSTERED (tenant_id, id)
)

-- schema.pc_tenant_sequences
IF OBJECT_ID(N'dbo.pc_tenant_sequences', N'U') IS NULL
CREATE TABLE dbo.pc_tenant_sequences (
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT pk_pc_tenant_sequences PRIMARY KEY CLUSTERED,
  last_seq BIGINT NOT NULL,
  last_updated DATETIMEOFFSET NOT NULL
)

-- schema.pc_event_progression
IF OBJECT_ID(N'dbo.pc_event_progression', N'U') IS NULL
CREATE TABLE dbo.pc_event_progression (
  name NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT pk_pc_event_progression PRIMARY KEY CLUSTERED,
  last_seq_id BIGINT NOT NULL,
  last_updated DATETIMEOFFSET NOT NULL
)

-- schema.pc_dead_letters
IF OBJECT_ID(N'dbo.pc_dead_letters', N'U') IS NULL
CREATE TABLE dbo.pc_dead_letters (
  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT pk_pc_dead_letters PRIMARY KEY CLUSTERED,
  projection NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  seq_id BIGINT NOT NULL,
  event_id UNIQUEIDENTIFIER NULL,
  type NVARCHAR(250) NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  exception_type NVARCHAR(500) NOT NULL,
  message NVARCHAR(MAX) NULL,
  timestamp DATETIMEOFFSET NOT NULL
)

-- schema.pc_outbox[0]
IF OBJECT_ID(N'dbo.pc_outbox', N'U') IS NULL
CREATE TABLE dbo.pc_outbox (
  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT pk_pc_outbox PRIMARY KEY CLUSTERED,
  message_id UNIQUEIDENTIFIER NOT NULL,
  shard NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  seq_id BIGINT NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  type NVARCHAR(500) NOT NULL,
  payload NVARCHAR(MAX) NOT NULL,
  created DATETIMEOFFSET NOT NULL,
  delivered_at DATETIMEOFFSET NULL,
  attempts INT NOT NULL,
  last_error NVARCHAR(MAX) NULL
)

-- schema.pc_outbox[1]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_outbox_pending' AND object_id = OBJECT_ID(N'dbo.pc_outbox'))
CREATE INDEX ix_pc_outbox_pending ON dbo.pc_outbox (shard, delivered_at, id)

-- schema.index:ix_pc_dead_letters_shard
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_dead_letters_shard' AND object_id = OBJECT_ID(N'dbo.pc_dead_letters'))
CREATE INDEX ix_pc_dead_letters_shard ON dbo.pc_dead_letters (projection, id)

-- schema.index:ix_pc_outbox_undelivered
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_outbox_undelivered' AND object_id = OBJECT_ID(N'dbo.pc_outbox'))
CREATE INDEX ix_pc_outbox_undelivered ON dbo.pc_outbox (delivered_at, shard)

-- schema.pc_events.correlation_id[0]
IF COL_LENGTH(N'dbo.pc_events', N'correlation_id') IS NULL
ALTER TABLE dbo.pc_events ADD correlation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL

-- schema.pc_events.correlation_id[1]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_events_correlation' AND object_id = OBJECT_ID(N'dbo.pc_events'))
CREATE INDEX ix_pc_events_correlation ON dbo.pc_events (tenant_id, correlation_id) WHERE correlation_id IS NOT NULL

-- schema.pc_events.causation_id
IF COL_LENGTH(N'dbo.pc_events', N'causation_id') IS NULL
ALTER TABLE dbo.pc_events ADD causation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL

-- schema.pc_events.headers
IF COL_LENGTH(N'dbo.pc_events', N'headers') IS NULL
ALTER TABLE dbo.pc_events ADD headers NVARCHAR(MAX) NULL CONSTRAINT ck_pc_events_headers CHECK (ISJSON(headers) = 1)

-- schema.pc_streams.archived
IF COL_LENGTH(N'dbo.pc_streams', N'archived') IS NULL
ALTER TABLE dbo.pc_streams ADD archived BIT NOT NULL CONSTRAINT df_pc_streams_archived DEFAULT 0

-- schema.pc_events_archive
IF OBJECT_ID(N'dbo.pc_events_archive', N'U') IS NULL
CREATE TABLE dbo.pc_events_archive (
  seq_id BIGINT NOT NULL CONSTRAINT pk_pc_events_archive PRIMARY KEY CLUSTERED,
  id UNIQUEIDENTIFIER NOT NULL,
  stream_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  version BIGINT NOT NULL,
  type NVARCHAR(250) NOT NULL,
  data NVARCHAR(MAX) NOT NULL CONSTRAINT ck_pc_events_archive_data CHECK (ISJSON(data) = 1),
  timestamp DATETIMEOFFSET NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_seq BIGINT NULL,
  correlation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL,
  causation_id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NULL,
  headers NVARCHAR(MAX) NULL CONSTRAINT ck_pc_events_archive_headers CHECK (ISJSON(headers) = 1),
  CONSTRAINT uq_pc_events_archive_stream UNIQUE (tenant_id, stream_id, version)
)

-- schema.pc_doc_order_summary
IF OBJECT_ID(N'dbo.pc_doc_order_summary', N'U') IS NULL
CREATE TABLE dbo.pc_doc_order_summary (
  id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  data NVARCHAR(MAX) NOT NULL CONSTRAINT ck_pc_doc_order_summary CHECK (ISJSON(data) = 1),
  version BIGINT NOT NULL,
  last_modified DATETIMEOFFSET NOT NULL,
  CONSTRAINT pk_pc_doc_order_summary PRIMARY KEY CLUSTERED (tenant_id, id)
)

-- schema.pc_doc_order_summary_rebuild
IF OBJECT_ID(N'dbo.pc_doc_order_summary_rebuild', N'U') IS NULL
CREATE TABLE dbo.pc_doc_order_summary_rebuild (
  id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  data NVARCHAR(MAX) NOT NULL CONSTRAINT ck_pc_doc_order_summary_rebuild CHECK (ISJSON(data) = 1),
  version BIGINT NOT NULL,
  last_modified DATETIMEOFFSET NOT NULL,
  CONSTRAINT pk_pc_doc_order_summary_rebuild PRIMARY KEY CLUSTERED (tenant_id, id)
)

-- events.insertStream
INSERT INTO dbo.pc_streams (id, tenant_id, type, version, timestamp, created) VALUES (?, ?, ?, ?, ?, ?)

-- events.upsertStream
MERGE dbo.pc_streams WITH (HOLDLOCK) AS target USING (VALUES (?, ?, ?, ?, ?, ?)) AS source (id, tenant_id, type, version, timestamp, created) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.version = target.version + source.version, target.timestamp = source.timestamp WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created) VALUES (source.id, source.tenant_id, source.type, source.version, source.timestamp, source.created) OUTPUT inserted.version;

-- events.upsertStreamsOfMany
MERGE dbo.pc_streams WITH (HOLDLOCK) AS target USING (SELECT ? AS tenant_id, ? AS timestamp, ? AS created, s.id, s.type, s.n FROM OPENJSON(?) WITH (id NVARCHAR(250), type NVARCHAR(MAX), n BIGINT) AS s) AS source ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.version = target.version + source.n, target.timestamp = source.timestamp WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created) VALUES (source.id, source.tenant_id, source.type, source.n, source.timestamp, source.created) OUTPUT inserted.id, inserted.version;

-- events.advanceStream
UPDATE dbo.pc_streams SET version = ?, timestamp = ? WHERE tenant_id = ? AND id = ? AND version = ?

-- events.selectStream
SELECT version, type, timestamp, archived FROM dbo.pc_streams WHERE tenant_id = ? AND id = ?

-- events.nextTenantSequence
MERGE dbo.pc_tenant_sequences WITH (HOLDLOCK) AS target USING (VALUES (?, ?, ?)) AS source (tenant_id, drawn, last_updated) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.last_seq = target.last_seq + source.drawn, target.last_updated = source.last_updated WHEN NOT MATCHED THEN INSERT (tenant_id, last_seq, last_updated) VALUES (source.tenant_id, source.drawn, source.last_updated) OUTPUT inserted.last_seq;

-- events.insertEvent
INSERT INTO dbo.pc_events (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- events.insertEventsOfMany
INSERT INTO dbo.pc_events (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT CAST(e.id AS UNIQUEIDENTIFIER), e.stream_id, e.version, e.type, e.data, ?, ?, e.tenant_seq, e.correlation_id, e.causation_id, e.headers FROM OPENJSON(?) AS r CROSS APPLY OPENJSON(r.value) WITH (id NVARCHAR(36), stream_id NVARCHAR(MAX), version BIGINT, type NVARCHAR(MAX), data NVARCHAR(MAX), tenant_seq BIGINT, correlation_id NVARCHAR(MAX), causation_id NVARCHAR(MAX), headers NVARCHAR(MAX)) AS e ORDER BY CAST(r.[key] AS INT)

-- events.selectStreamEvents
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? ORDER BY version

-- events.selectAppendedSequences
SELECT seq_id FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version >= ? AND version <= ? ORDER BY version

-- events.ownAppendedSequences
SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = ?, @seq bigint, @lowest bigint, @resource nvarchar(255), @result int; DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR SELECT seq_id FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version >= ? AND version <= ?; OPEN drawn; FETCH NEXT FROM drawn INTO @seq; WHILE @@FETCH_STATUS = 0 BEGIN IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq; SET @resource = CONCAT(@prefix, @seq); EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 30000; IF @result < 0 THROW 51000, 'sp_getapplock on a sequence owner lock failed', 1; FETCH NEXT FROM drawn INTO @seq; END; CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;

-- events.selectAppendedSequencesOfMany
SELECT e.stream_id, e.version, e.seq_id FROM OPENJSON(?) WITH (stream_id NVARCHAR(250), first_version BIGINT, last_version BIGINT) AS a JOIN dbo.pc_events e ON e.stream_id = a.stream_id COLLATE Latin1_General_100_BIN2 AND e.version >= a.first_version AND e.version <= a.last_version WHERE e.tenant_id = ?

-- events.ownAppendedSequencesOfMany
SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = ?, @seq bigint, @lowest bigint, @resource nvarchar(255), @result int; DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR SELECT e.seq_id FROM OPENJSON(?) WITH (stream_id NVARCHAR(250), first_version BIGINT, last_version BIGINT) AS a JOIN dbo.pc_events e ON e.stream_id = a.stream_id COLLATE Latin1_General_100_BIN2 AND e.version >= a.first_version AND e.version <= a.last_version WHERE e.tenant_id = ?; OPEN drawn; FETCH NEXT FROM drawn INTO @seq; WHILE @@FETCH_STATUS = 0 BEGIN IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq; SET @resource = CONCAT(@prefix, @seq); EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 30000; IF @result < 0 THROW 51000, 'sp_getapplock on a sequence owner lock failed', 1; FETCH NEXT FROM drawn INTO @seq; END; CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;

-- events.selectPassedMark
SELECT last_seq_id FROM dbo.pc_event_progression WHERE name = 'HighWaterMark'

-- events.selectCorrelatedEvents
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND correlation_id = ? AND correlation_id IS NOT NULL ORDER BY seq_id

-- events.selectEventNumbers
SELECT seq_id, tenant_seq FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version = ?

-- archive.markStream
UPDATE dbo.pc_streams SET archived = ? WHERE tenant_id = ? AND id = ?

-- archive.copyToArchive
INSERT INTO dbo.pc_events_archive (seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ?

-- archive.deleteFromLive
DELETE FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ?

-- archive.copyMarkersToArchive
INSERT INTO dbo.pc_events_archive (seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND type = ?

-- archive.deleteMarkersFromLive
DELETE FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND type = ?

-- archive.copyToLive
SET IDENTITY_INSERT dbo.pc_events ON;
BEGIN TRY
INSERT INTO dbo.pc_events (seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers FROM dbo.pc_events_archive WHERE tenant_id = ? AND stream_id = ? AND type <> ?;
SET IDENTITY_INSERT dbo.pc_events OFF;
END TRY
BEGIN CATCH
SET IDENTITY_INSERT dbo.pc_events OFF;
THROW;
END CATCH

-- archive.deleteFromArchive
DELETE FROM dbo.pc_events_archive WHERE tenant_id = ? AND stream_id = ? AND type <> ?

-- archive.selectStreamWithArchived
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? UNION ALL SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events_archive WHERE tenant_id = ? AND stream_id = ? ORDER BY version

-- archive.lockStream
UPDATE dbo.pc_streams SET version = version WHERE tenant_id = ? AND id = ?

-- archive.selectThrough
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version <= ? ORDER BY version

-- archive.copyReplacedToArchive
INSERT INTO dbo.pc_events_archive (seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version <= ? AND type <> ?

-- archive.deleteReplaced
DELETE FROM dbo.pc_events WHERE tenant_id = ? AND stream_id = ? AND version < ?

-- archive.replaceWithSnapshot
UPDATE dbo.pc_events SET id = ?, type = ?, data = ?, correlation_id = NULL, causation_id = NULL, headers = NULL WHERE tenant_id = ? AND stream_id = ? AND version = ?

-- documents.upsert
MERGE dbo.pc_doc_order_summary WITH (HOLDLOCK) AS target USING (VALUES (?, ?, ?, ?)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);

-- documents.delete
DELETE FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND id = ?

-- documents.load
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND id = ?

-- documents.loadMany
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND id IN (SELECT CAST(value AS NVARCHAR(250)) COLLATE Latin1_General_100_BIN2 FROM OPENJSON(?) WHERE DATALENGTH(value) <= 500)

-- documents.selectAll
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ?

-- documents.countAll
SELECT COUNT_BIG(*) FROM dbo.pc_doc_order_summary WHERE tenant_id = ?

-- documents.deleteAll
DELETE FROM dbo.pc_doc_order_summary

-- documents.deleteTenant
DELETE FROM dbo.pc_doc_order_summary WHERE tenant_id = ?

-- documents.insert
INSERT INTO dbo.pc_doc_order_summary (id, tenant_id, data, version, last_modified) VALUES (?, ?, ?, 1, ?)

-- daemon.highWaterMark
SELECT MIN(CASE WHEN next_seq > seq_id + 1 THEN seq_id END) AS gap_at, MIN(CASE WHEN next_seq > seq_id + 1 THEN next_seq END) AS after_gap, MAX(seq_id) AS highest FROM (SELECT seq_id, LEAD(seq_id) OVER (ORDER BY seq_id) AS next_seq FROM (SELECT CAST(? AS BIGINT) AS seq_id UNION ALL SELECT seq_id FROM dbo.pc_events WITH (READCOMMITTEDLOCK, READPAST) WHERE seq_id > ?) AS candidates) AS ordered

-- daemon.listGaps
SELECT seq_id AS before_gap, next_seq AS after_gap FROM (SELECT seq_id, LEAD(seq_id) OVER (ORDER BY seq_id) AS next_seq FROM (SELECT CAST(? AS BIGINT) AS seq_id UNION ALL SELECT seq_id FROM dbo.pc_events WITH (READCOMMITTEDLOCK, READPAST) WHERE seq_id > ?) AS candidates) AS ordered WHERE next_seq > seq_id + 1 ORDER BY seq_id

-- daemon.loadPage
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers FROM dbo.pc_events WHERE seq_id > ? AND seq_id <= ? ORDER BY seq_id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY

-- daemon.tenantMarks
SELECT tenant_id, last_seq FROM dbo.pc_tenant_sequences WITH (READCOMMITTEDLOCK, READPAST)

-- daemon.loadTenantPage
SELECT seq_id, id, stream_id, version, type, data, timestamp, tenant_id, correlation_id, causation_id, headers, tenant_seq FROM dbo.pc_events WHERE tenant_id = ? AND tenant_seq IS NOT NULL AND tenant_seq > ? AND tenant_seq <= ? ORDER BY tenant_seq OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY

-- daemon.selectProgression
SELECT last_seq_id FROM dbo.pc_event_progression WHERE name = ?

-- daemon.selectProgressionStamp
SELECT last_seq_id, last_updated FROM dbo.pc_event_progression WHERE name = ?

-- daemon.advanceProgression
MERGE dbo.pc_event_progression WITH (HOLDLOCK) AS target USING (VALUES (?, ?, ?, ?)) AS source (name, floor, last_seq_id, last_updated) ON target.name = source.name COLLATE Latin1_General_100_BIN2 WHEN MATCHED AND target.last_seq_id = source.floor THEN UPDATE SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated WHEN NOT MATCHED AND source.floor = 0 THEN INSERT (name, last_seq_id, last_updated) VALUES (source.name, source.last_seq_id, source.last_updated);

-- daemon.raiseMark
MERGE dbo.pc_event_progression WITH (HOLDLOCK) AS target USING (VALUES (?, ?, ?)) AS source (name, last_seq_id, last_updated) ON target.name = source.name COLLATE Latin1_General_100_BIN2 WHEN MATCHED AND target.last_seq_id < source.last_seq_id THEN UPDATE SET target.last_seq_id = source.last_seq_id, target.last_updated = source.last_updated WHEN NOT MATCHED THEN INSERT (name, last_seq_id, last_updated) VALUES (source.name, source.last_seq_id, source.last_updated);

-- daemon.deleteProgression
DELETE FROM dbo.pc_event_progression WHERE name = ?

-- daemon.insertDeadLetter
INSERT INTO dbo.pc_dead_letters (projection, seq_id, event_id, type, tenant_id, exception_type, message, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)

-- daemon.countLiveNodes
SELECT COUNT(*) FROM dbo.pc_event_progression WHERE name LIKE '~node:%' AND last_seq_id > ?

-- daemon.listNodes
SELECT name, last_seq_id FROM dbo.pc_event_progression WHERE name LIKE '~node:%'

-- daemon.deleteDeadNodes
DELETE FROM dbo.pc_event_progression WHERE name LIKE '~node:%' AND last_seq_id < ?

-- daemon.countSequences
SELECT COUNT(*) FROM dbo.pc_events WITH (READCOMMITTEDLOCK, READPAST) WHERE seq_id >= ? AND seq_id <= ?

-- daemon.claimSequences
SET NOCOUNT ON; DECLARE @seq bigint = ?, @to bigint = ?, @prefix nvarchar(200) = ?, @resource nvarchar(255), @result int, @held int = 0, @opened int; SELECT @opened = COUNT(*) FROM dbo.pc_event_progression WHERE name = N'HighWaterMark'; WHILE @seq <= @to AND @held = 0 BEGIN SET @resource = CONCAT(@prefix, @seq); IF APPLOCK_TEST('public', @resource, 'Exclusive', 'Transaction') = 0 SET @held = 1 ELSE BEGIN EXEC @result = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 0; IF @result < 0 SET @held = 1; END; SET @seq = @seq + 1; END; SELECT @held;

-- daemon.selectEveryProgression
SELECT name, last_seq_id FROM dbo.pc_event_progression

-- outbox.insert
INSERT INTO dbo.pc_outbox (message_id, shard, seq_id, tenant_id, type, payload, created, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, 0)

-- outbox.selectUndelivered
SELECT id, message_id, seq_id, tenant_id, type, payload FROM dbo.pc_outbox WHERE shard = ? AND delivered_at IS NULL ORDER BY id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY

-- outbox.markDelivered
UPDATE dbo.pc_outbox SET delivered_at = ?, attempts = attempts + 1 WHERE id = ?

-- outbox.recordFailure
UPDATE dbo.pc_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?

-- outbox.countUndelivered
SELECT COUNT(*), MIN(created) FROM dbo.pc_outbox WHERE shard = ? AND delivered_at IS NULL

-- outbox.deleteDelivered
DELETE FROM dbo.pc_outbox WHERE id IN (SELECT id FROM dbo.pc_outbox WHERE delivered_at IS NOT NULL AND delivered_at < ? ORDER BY delivered_at OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY)

-- outbox.pendingShards
SELECT DISTINCT shard FROM dbo.pc_outbox WHERE delivered_at IS NULL

-- deadLetters.list
SELECT d.id, d.projection, d.seq_id, d.type, d.tenant_id, d.exception_type, d.message, d.timestamp, e.stream_id, e.data FROM dbo.pc_dead_letters d LEFT JOIN dbo.pc_events e ON e.seq_id = d.seq_id WHERE d.projection = ? AND d.id > ? ORDER BY d.projection, d.id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY

-- deadLetters.one
SELECT d.id, d.projection, d.seq_id, d.type, d.tenant_id, d.exception_type, d.message, d.timestamp, e.stream_id, e.data FROM dbo.pc_dead_letters d LEFT JOIN dbo.pc_events e ON e.seq_id = d.seq_id WHERE d.projection = ? AND d.id = ?

-- deadLetters.counts
SELECT projection, COUNT(*) FROM dbo.pc_dead_letters GROUP BY projection

-- deadLetters.delete
DELETE FROM dbo.pc_dead_letters WHERE projection = ? AND id = ?

-- documents.shadow.copyAll
INSERT INTO dbo.pc_doc_order_summary (id, tenant_id, data, version, last_modified) SELECT id, tenant_id, data, version, last_modified FROM dbo.pc_doc_order_summary_rebuild

-- documents.shadow.copyTenant
INSERT INTO dbo.pc_doc_order_summary (id, tenant_id, data, version, last_modified) SELECT id, tenant_id, data, version, last_modified FROM dbo.pc_doc_order_summary_rebuild WHERE tenant_id = ?

-- documents.jsonText(customer.address.city)
JSON_VALUE(data, '$."customer"."address"."city"')

-- documents.jsonNumber(total)
COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10)))

-- documents.jsonTimestamp(placedAt)
TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127)

-- query.equalsText
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND JSON_VALUE(data, '$."status"') COLLATE Latin1_General_100_BIN2 = ? ORDER BY id

-- query.rangeOrderedPage
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND (COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) >= ? AND COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) < ?) ORDER BY COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) DESC, id OFFSET ? ROWS FETCH NEXT ? ROWS ONLY

-- query.nestedInNullPrefixOr
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND (JSON_VALUE(data, '$."customer"."address"."city"') COLLATE Latin1_General_100_BIN2 IN (?, ?) OR JSON_VALUE(data, '$."customer"."id"') COLLATE Latin1_General_100_BIN2 IS NULL OR JSON_VALUE(data, '$."status"') COLLATE Latin1_General_100_BIN2 LIKE ? ESCAPE '\') ORDER BY id

-- query.timestampKeyset
SELECT data FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127) > ? AND ((TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127) > ?) OR (TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127) = ? AND COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) < ?) OR (TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127) = ? AND COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) = ? AND id > ?)) ORDER BY TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 LIKE N'%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%' THEN STUFF(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N'%[^0-9]%', SUBSTRING(JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2, CHARINDEX(N'.', JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'') ELSE JSON_VALUE(data, '$."placedAt"') COLLATE Latin1_General_100_BIN2 END, 127), COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) DESC, id OFFSET ? ROWS FETCH NEXT ? ROWS ONLY

-- query.count
SELECT COUNT_BIG(*) FROM dbo.pc_doc_order_summary WHERE tenant_id = ? AND JSON_VALUE(data, '$."status"') COLLATE Latin1_General_100_BIN2 <> ?

-- index.text.ddl[0]
IF COL_LENGTH(N'dbo.pc_doc_order_summary', N'q_status') IS NULL
ALTER TABLE dbo.pc_doc_order_summary ADD q_status AS JSON_VALUE(data, '$."status"') COLLATE Latin1_General_100_BIN2 PERSISTED

-- index.text.ddl[1]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_pc_doc_order_summary_status' AND object_id = OBJECT_ID(N'dbo.pc_doc_order_summary'))
CREATE INDEX ix_pc_doc_order_summary_status ON dbo.pc_doc_order_summary (tenant_id, q_status, id)

-- index.text.queryExpressions
q_status

-- index.uniqueCompositeNested.ddl[0]
IF COL_LENGTH(N'dbo.pc_doc_order_summary', N'q_customer_id') IS NULL
ALTER TABLE dbo.pc_doc_order_summary ADD q_customer_id AS JSON_VALUE(data, '$."customer"."id"') COLLATE Latin1_General_100_BIN2 PERSISTED

-- index.uniqueCompositeNested.ddl[1]
IF COL_LENGTH(N'dbo.pc_doc_order_summary', N'q_total') IS NULL
ALTER TABLE dbo.pc_doc_order_summary ADD q_total AS COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) PERSISTED

-- index.uniqueCompositeNested.ddl[2]
IF COL_LENGTH(N'dbo.pc_doc_order_summary', N'g_ux_pc_doc_order_summary_customer_id_total') IS NULL
ALTER TABLE dbo.pc_doc_order_summary ADD g_ux_pc_doc_order_summary_customer_id_total AS CASE WHEN JSON_VALUE(data, '$."customer"."id"') COLLATE Latin1_General_100_BIN2 IS NOT NULL AND COALESCE(TRY_CAST(JSON_VALUE(data, '$."total"') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, '$."total"') AS FLOAT) AS DECIMAL(38, 10))) IS NOT NULL THEN NULL ELSE id END PERSISTED

-- index.uniqueCompositeNested.ddl[3]
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_pc_doc_order_summary_customer_id_total' AND object_id = OBJECT_ID(N'dbo.pc_doc_order_summary'))
CREATE UNIQUE INDEX ux_pc_doc_order_summary_customer_id_total ON dbo.pc_doc_order_summary (tenant_id, q_customer_id, q_total, g_ux_pc_doc_order_summary_customer_id_total)

-- index.uniqueCompositeNested.queryExpressions
q_customer_id | q_total

-- startup.serverReport
SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128)) AS product_version, CAST(SERVERPROPERTY('Edition') AS NVARCHAR(128)) AS edition, d.name, d.compatibility_level, d.is_read_committed_snapshot_on, d.snapshot_isolation_state_desc, (SELECT c.collation_name FROM sys.columns AS c WHERE c.object_id = OBJECT_ID(N'dbo.pc_events') AND c.name = N'stream_id') AS key_collation, CAST(SQL_VARIANT_PROPERTY(?, 'BaseType') AS NVARCHAR(128)) AS text_parameter_type FROM sys.databases AS d WHERE d.database_id = DB_ID()

