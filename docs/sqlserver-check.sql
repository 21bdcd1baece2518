-- Ferret: SQL Server check. Made by SqlServerCheckScriptTest from the dialect's own statements;
-- do not edit. Run against an empty database with the login the application uses (it needs CREATE
-- SCHEMA and CREATE TABLE here), in sqlcmd or SSMS:
--   sqlcmd -S host -d ferret -U user -P ... -i docs/sqlserver-check.sql
-- Each check prints one line, OK or FAIL with the server's message. It works in schema ferret_check,
-- which it drops before and after. A few minutes at most; nothing outside that schema is touched.
SET NOCOUNT ON;
GO

DECLARE @drop nvarchar(max) = N'';
SELECT @drop += N'DROP TABLE ferret_check.' + QUOTENAME(name) + N'; ' FROM sys.tables WHERE schema_id = SCHEMA_ID(N'ferret_check');
EXEC(@drop);
IF SCHEMA_ID(N'ferret_check') IS NOT NULL EXEC(N'DROP SCHEMA ferret_check');
GO

-- check 1: schema 1/21: IF SCHEMA_ID(N'ferret_check') IS NULL EXEC(N'CREATE SCHEMA ferret_check')
BEGIN TRY
  EXEC(N'IF SCHEMA_ID(N''ferret_check'') IS NULL EXEC(N''CREATE SCHEMA ferret_check'')');
  PRINT N'OK   check 1: schema 1/21: IF SCHEMA_ID(N''ferret_check'') IS NULL EXEC(N''CREATE SCHEMA ferret_check'')';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 1: schema 1/21: IF SCHEMA_ID(N''ferret_check'') IS NULL EXEC(N''CREATE SCHEMA ferret_check''): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 2: schema 2/21: CREATE TABLE ferret_check.pc_events (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_events'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_events (
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
)');
  PRINT N'OK   check 2: schema 2/21: CREATE TABLE ferret_check.pc_events (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 2: schema 2/21: CREATE TABLE ferret_check.pc_events (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 3: schema 3/21: CREATE UNIQUE INDEX ux_pc_events_tenant_seq ON ferret_check.pc_events (tenant_id, tenant_s...
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ux_pc_events_tenant_seq'' AND object_id = OBJECT_ID(N''ferret_check.pc_events''))
CREATE UNIQUE INDEX ux_pc_events_tenant_seq ON ferret_check.pc_events (tenant_id, tenant_seq) WHERE tenant_seq IS NOT NULL');
  PRINT N'OK   check 3: schema 3/21: CREATE UNIQUE INDEX ux_pc_events_tenant_seq ON ferret_check.pc_events (tenant_id, tenant_s...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 3: schema 3/21: CREATE UNIQUE INDEX ux_pc_events_tenant_seq ON ferret_check.pc_events (tenant_id, tenant_s...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 4: schema 4/21: CREATE INDEX ix_pc_events_correlation ON ferret_check.pc_events (tenant_id, correlation_id...
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_events_correlation'' AND object_id = OBJECT_ID(N''ferret_check.pc_events''))
CREATE INDEX ix_pc_events_correlation ON ferret_check.pc_events (tenant_id, correlation_id) WHERE correlation_id IS NOT NULL');
  PRINT N'OK   check 4: schema 4/21: CREATE INDEX ix_pc_events_correlation ON ferret_check.pc_events (tenant_id, correlation_id...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 4: schema 4/21: CREATE INDEX ix_pc_events_correlation ON ferret_check.pc_events (tenant_id, correlation_id...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 5: schema 5/21: CREATE TABLE ferret_check.pc_streams (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_streams'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_streams (
  id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  type NVARCHAR(250) NULL,
  version BIGINT NOT NULL,
  timestamp DATETIMEOFFSET NOT NULL,
  created DATETIMEOFFSET NOT NULL,
  archived BIT NOT NULL CONSTRAINT df_pc_streams_archived DEFAULT 0,
  CONSTRAINT pk_pc_streams PRIMARY KEY CLUSTERED (tenant_id, id)
)');
  PRINT N'OK   check 5: schema 5/21: CREATE TABLE ferret_check.pc_streams (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 5: schema 5/21: CREATE TABLE ferret_check.pc_streams (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 6: schema 6/21: CREATE TABLE ferret_check.pc_tenant_sequences (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_tenant_sequences'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_tenant_sequences (
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT pk_pc_tenant_sequences PRIMARY KEY CLUSTERED,
  last_seq BIGINT NOT NULL,
  last_updated DATETIMEOFFSET NOT NULL
)');
  PRINT N'OK   check 6: schema 6/21: CREATE TABLE ferret_check.pc_tenant_sequences (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 6: schema 6/21: CREATE TABLE ferret_check.pc_tenant_sequences (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 7: schema 7/21: CREATE TABLE ferret_check.pc_event_progression (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_event_progression'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_event_progression (
  name NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL CONSTRAINT pk_pc_event_progression PRIMARY KEY CLUSTERED,
  last_seq_id BIGINT NOT NULL,
  last_updated DATETIMEOFFSET NOT NULL
)');
  PRINT N'OK   check 7: schema 7/21: CREATE TABLE ferret_check.pc_event_progression (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 7: schema 7/21: CREATE TABLE ferret_check.pc_event_progression (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 8: schema 8/21: CREATE TABLE ferret_check.pc_dead_letters (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_dead_letters'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_dead_letters (
  id BIGINT IDENTITY(1,1) NOT NULL CONSTRAINT pk_pc_dead_letters PRIMARY KEY CLUSTERED,
  projection NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  seq_id BIGINT NOT NULL,
  event_id UNIQUEIDENTIFIER NULL,
  type NVARCHAR(250) NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  exception_type NVARCHAR(500) NOT NULL,
  message NVARCHAR(MAX) NULL,
  timestamp DATETIMEOFFSET NOT NULL
)');
  PRINT N'OK   check 8: schema 8/21: CREATE TABLE ferret_check.pc_dead_letters (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 8: schema 8/21: CREATE TABLE ferret_check.pc_dead_letters (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 9: schema 9/21: CREATE TABLE ferret_check.pc_outbox (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_outbox'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_outbox (
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
)');
  PRINT N'OK   check 9: schema 9/21: CREATE TABLE ferret_check.pc_outbox (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 9: schema 9/21: CREATE TABLE ferret_check.pc_outbox (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 10: schema 10/21: CREATE INDEX ix_pc_outbox_pending ON ferret_check.pc_outbox (shard, delivered_at, id)
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_outbox_pending'' AND object_id = OBJECT_ID(N''ferret_check.pc_outbox''))
CREATE INDEX ix_pc_outbox_pending ON ferret_check.pc_outbox (shard, delivered_at, id)');
  PRINT N'OK   check 10: schema 10/21: CREATE INDEX ix_pc_outbox_pending ON ferret_check.pc_outbox (shard, delivered_at, id)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 10: schema 10/21: CREATE INDEX ix_pc_outbox_pending ON ferret_check.pc_outbox (shard, delivered_at, id): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 11: schema 11/21: CREATE TABLE ferret_check.pc_events_archive (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_events_archive'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_events_archive (
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
)');
  PRINT N'OK   check 11: schema 11/21: CREATE TABLE ferret_check.pc_events_archive (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 11: schema 11/21: CREATE TABLE ferret_check.pc_events_archive (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 12: schema 12/21: CREATE TABLE ferret_check.pc_doc_reading (
BEGIN TRY
  EXEC(N'IF OBJECT_ID(N''ferret_check.pc_doc_reading'', N''U'') IS NULL
CREATE TABLE ferret_check.pc_doc_reading (
  id NVARCHAR(250) COLLATE Latin1_General_100_BIN2 NOT NULL,
  tenant_id NVARCHAR(100) COLLATE Latin1_General_100_BIN2 NOT NULL,
  data NVARCHAR(MAX) NOT NULL CONSTRAINT ck_pc_doc_reading CHECK (ISJSON(data) = 1),
  version BIGINT NOT NULL,
  last_modified DATETIMEOFFSET NOT NULL,
  CONSTRAINT pk_pc_doc_reading PRIMARY KEY CLUSTERED (tenant_id, id)
)');
  PRINT N'OK   check 12: schema 12/21: CREATE TABLE ferret_check.pc_doc_reading (';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 12: schema 12/21: CREATE TABLE ferret_check.pc_doc_reading (: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 13: schema 13/21: CREATE INDEX ix_pc_dead_letters_shard ON ferret_check.pc_dead_letters (projection, id)
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_dead_letters_shard'' AND object_id = OBJECT_ID(N''ferret_check.pc_dead_letters''))
CREATE INDEX ix_pc_dead_letters_shard ON ferret_check.pc_dead_letters (projection, id)');
  PRINT N'OK   check 13: schema 13/21: CREATE INDEX ix_pc_dead_letters_shard ON ferret_check.pc_dead_letters (projection, id)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 13: schema 13/21: CREATE INDEX ix_pc_dead_letters_shard ON ferret_check.pc_dead_letters (projection, id): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 14: schema 14/21: CREATE INDEX ix_pc_outbox_undelivered ON ferret_check.pc_outbox (delivered_at, shard)
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_outbox_undelivered'' AND object_id = OBJECT_ID(N''ferret_check.pc_outbox''))
CREATE INDEX ix_pc_outbox_undelivered ON ferret_check.pc_outbox (delivered_at, shard)');
  PRINT N'OK   check 14: schema 14/21: CREATE INDEX ix_pc_outbox_undelivered ON ferret_check.pc_outbox (delivered_at, shard)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 14: schema 14/21: CREATE INDEX ix_pc_outbox_undelivered ON ferret_check.pc_outbox (delivered_at, shard): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 15: schema 15/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_amount AS COALESCE(TRY_CAST(JSON_VALUE(data,...
BEGIN TRY
  EXEC(N'IF COL_LENGTH(N''ferret_check.pc_doc_reading'', N''q_amount'') IS NULL
ALTER TABLE ferret_check.pc_doc_reading ADD q_amount AS COALESCE(TRY_CAST(JSON_VALUE(data, ''$."amount"'') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, ''$."amount"'') AS FLOAT) AS DECIMAL(38, 10))) PERSISTED');
  PRINT N'OK   check 15: schema 15/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_amount AS COALESCE(TRY_CAST(JSON_VALUE(data,...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 15: schema 15/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_amount AS COALESCE(TRY_CAST(JSON_VALUE(data,...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 16: schema 16/21: CREATE INDEX ix_pc_doc_reading_amount ON ferret_check.pc_doc_reading (tenant_id, q_amount,...
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_doc_reading_amount'' AND object_id = OBJECT_ID(N''ferret_check.pc_doc_reading''))
CREATE INDEX ix_pc_doc_reading_amount ON ferret_check.pc_doc_reading (tenant_id, q_amount, id)');
  PRINT N'OK   check 16: schema 16/21: CREATE INDEX ix_pc_doc_reading_amount ON ferret_check.pc_doc_reading (tenant_id, q_amount,...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 16: schema 16/21: CREATE INDEX ix_pc_doc_reading_amount ON ferret_check.pc_doc_reading (tenant_id, q_amount,...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 17: schema 17/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_at AS TRY_CONVERT(DATETIMEOFFSET(7), CASE WH...
BEGIN TRY
  EXEC(N'IF COL_LENGTH(N''ferret_check.pc_doc_reading'', N''q_at'') IS NULL
ALTER TABLE ferret_check.pc_doc_reading ADD q_at AS TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2 LIKE N''%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%'' THEN STUFF(JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N''%[^0-9]%'', SUBSTRING(JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'''') ELSE JSON_VALUE(data, ''$."at"'') COLLATE Latin1_General_100_BIN2 END, 127) PERSISTED');
  PRINT N'OK   check 17: schema 17/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_at AS TRY_CONVERT(DATETIMEOFFSET(7), CASE WH...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 17: schema 17/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_at AS TRY_CONVERT(DATETIMEOFFSET(7), CASE WH...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 18: schema 18/21: CREATE INDEX ix_pc_doc_reading_at ON ferret_check.pc_doc_reading (tenant_id, q_at, id)
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ix_pc_doc_reading_at'' AND object_id = OBJECT_ID(N''ferret_check.pc_doc_reading''))
CREATE INDEX ix_pc_doc_reading_at ON ferret_check.pc_doc_reading (tenant_id, q_at, id)');
  PRINT N'OK   check 18: schema 18/21: CREATE INDEX ix_pc_doc_reading_at ON ferret_check.pc_doc_reading (tenant_id, q_at, id)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 18: schema 18/21: CREATE INDEX ix_pc_doc_reading_at ON ferret_check.pc_doc_reading (tenant_id, q_at, id): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 19: schema 19/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_owner AS JSON_VALUE(data, '$."owner"') COLLA...
BEGIN TRY
  EXEC(N'IF COL_LENGTH(N''ferret_check.pc_doc_reading'', N''q_owner'') IS NULL
ALTER TABLE ferret_check.pc_doc_reading ADD q_owner AS JSON_VALUE(data, ''$."owner"'') COLLATE Latin1_General_100_BIN2 PERSISTED');
  PRINT N'OK   check 19: schema 19/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_owner AS JSON_VALUE(data, ''$."owner"'') COLLA...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 19: schema 19/21: ALTER TABLE ferret_check.pc_doc_reading ADD q_owner AS JSON_VALUE(data, ''$."owner"'') COLLA...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 20: schema 20/21: ALTER TABLE ferret_check.pc_doc_reading ADD g_ux_pc_doc_reading_owner AS CASE WHEN JSON_VA...
BEGIN TRY
  EXEC(N'IF COL_LENGTH(N''ferret_check.pc_doc_reading'', N''g_ux_pc_doc_reading_owner'') IS NULL
ALTER TABLE ferret_check.pc_doc_reading ADD g_ux_pc_doc_reading_owner AS CASE WHEN JSON_VALUE(data, ''$."owner"'') COLLATE Latin1_General_100_BIN2 IS NOT NULL THEN NULL ELSE id END PERSISTED');
  PRINT N'OK   check 20: schema 20/21: ALTER TABLE ferret_check.pc_doc_reading ADD g_ux_pc_doc_reading_owner AS CASE WHEN JSON_VA...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 20: schema 20/21: ALTER TABLE ferret_check.pc_doc_reading ADD g_ux_pc_doc_reading_owner AS CASE WHEN JSON_VA...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 21: schema 21/21: CREATE UNIQUE INDEX ux_pc_doc_reading_owner ON ferret_check.pc_doc_reading (tenant_id, q_o...
BEGIN TRY
  EXEC(N'IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N''ux_pc_doc_reading_owner'' AND object_id = OBJECT_ID(N''ferret_check.pc_doc_reading''))
CREATE UNIQUE INDEX ux_pc_doc_reading_owner ON ferret_check.pc_doc_reading (tenant_id, q_owner, g_ux_pc_doc_reading_owner)');
  PRINT N'OK   check 21: schema 21/21: CREATE UNIQUE INDEX ux_pc_doc_reading_owner ON ferret_check.pc_doc_reading (tenant_id, q_o...';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 21: schema 21/21: CREATE UNIQUE INDEX ux_pc_doc_reading_owner ON ferret_check.pc_doc_reading (tenant_id, q_o...: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 22: document 'big' (amount 1.25E7, at 2026-03-01T10:00:00.123456789Z)
BEGIN TRY
  EXEC(N'EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''big'', N''*DEFAULT*'', N''{"amount":1.25E7,"at":"2026-03-01T10:00:00.123456789Z","id":"big","local":"2026-03-01T12:00:00.123456789+02:00","owner":"a"}'', SYSDATETIMEOFFSET();');
  PRINT N'OK   check 22: document ''big'' (amount 1.25E7, at 2026-03-01T10:00:00.123456789Z)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 22: document ''big'' (amount 1.25E7, at 2026-03-01T10:00:00.123456789Z): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 23: document 'bigger' (amount 3.5E8, at 2026-03-01T10:00:00.12345679Z)
BEGIN TRY
  EXEC(N'EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''bigger'', N''*DEFAULT*'', N''{"amount":3.5E8,"at":"2026-03-01T10:00:00.12345679Z","id":"bigger","local":"2026-03-01T12:00:00.12345679+02:00","owner":"b"}'', SYSDATETIMEOFFSET();');
  PRINT N'OK   check 23: document ''bigger'' (amount 3.5E8, at 2026-03-01T10:00:00.12345679Z)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 23: document ''bigger'' (amount 3.5E8, at 2026-03-01T10:00:00.12345679Z): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 24: document 'tiny' (amount 9.5E-4, at 2026-03-01T09:59:59Z)
BEGIN TRY
  EXEC(N'EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''tiny'', N''*DEFAULT*'', N''{"amount":9.5E-4,"at":"2026-03-01T09:59:59Z","id":"tiny","local":"2026-03-01T11:59:59+02:00","owner":"c"}'', SYSDATETIMEOFFSET();');
  PRINT N'OK   check 24: document ''tiny'' (amount 9.5E-4, at 2026-03-01T09:59:59Z)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 24: document ''tiny'' (amount 9.5E-4, at 2026-03-01T09:59:59Z): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 25: document 'small' (amount 12.5, at 2026-03-01T10:00:00.1Z), no owner: the unique index's guard keeps it apart
BEGIN TRY
  EXEC(N'EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''small'', N''*DEFAULT*'', N''{"amount":12.5,"at":"2026-03-01T10:00:00.1Z","id":"small","local":"2026-03-01T12:00:00.1+02:00"}'', SYSDATETIMEOFFSET();');
  PRINT N'OK   check 25: document ''small'' (amount 12.5, at 2026-03-01T10:00:00.1Z), no owner: the unique index''s guard keeps it apart';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 25: document ''small'' (amount 12.5, at 2026-03-01T10:00:00.1Z), no owner: the unique index''s guard keeps it apart: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 26: document 'half' (amount 0.5, at 2026-03-01T10:00:01Z), no owner: the unique index's guard keeps it apart
BEGIN TRY
  EXEC(N'EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''half'', N''*DEFAULT*'', N''{"amount":0.5,"at":"2026-03-01T10:00:01Z","id":"half","local":"2026-03-01T12:00:01+02:00"}'', SYSDATETIMEOFFSET();');
  PRINT N'OK   check 26: document ''half'' (amount 0.5, at 2026-03-01T10:00:01Z), no owner: the unique index''s guard keeps it apart';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 26: document ''half'' (amount 0.5, at 2026-03-01T10:00:01Z), no owner: the unique index''s guard keeps it apart: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 27: exponent-form numbers are indexed by value (1.25E7 and 3.5E8 above 1,000,000)
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE q_amount > 1000000) <> 2 THROW 51000, N''expected 2'', 1;');
  PRINT N'OK   check 27: exponent-form numbers are indexed by value (1.25E7 and 3.5E8 above 1,000,000)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 27: exponent-form numbers are indexed by value (1.25E7 and 3.5E8 above 1,000,000): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 28: exponent-form numbers compare by value where no index is (the query's own expression)
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE COALESCE(TRY_CAST(JSON_VALUE(data, ''$."amount"'') AS DECIMAL(38, 10)), TRY_CAST(TRY_CAST(JSON_VALUE(data, ''$."amount"'') AS FLOAT) AS DECIMAL(38, 10))) > 1000000) <> 2 THROW 51000, N''expected 2'', 1;');
  PRINT N'OK   check 28: exponent-form numbers compare by value where no index is (the query''s own expression)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 28: exponent-form numbers compare by value where no index is (the query''s own expression): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 29: a small exponent-form number (9.5E-4) is below 0.001
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE q_amount < 0.001) <> 1 THROW 51000, N''expected 1'', 1;');
  PRINT N'OK   check 29: a small exponent-form number (9.5E-4) is below 0.001';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 29: a small exponent-form number (9.5E-4) is below 0.001: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 30: numbers sort by value
BEGIN TRY
  EXEC(N'IF (SELECT STRING_AGG(id, N'','') WITHIN GROUP (ORDER BY q_amount) FROM ferret_check.pc_doc_reading) <> N''tiny,half,small,big,bigger'' THROW 51000, N''wrong order'', 1;');
  PRINT N'OK   check 30: numbers sort by value';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 30: numbers sort by value: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 31: points in time with nine fractional digits are indexed, not NULL
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE q_at IS NULL) <> 0 THROW 51000, N''expected 0'', 1;');
  PRINT N'OK   check 31: points in time with nine fractional digits are indexed, not NULL';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 31: points in time with nine fractional digits are indexed, not NULL: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 32: points in time compare by instant (Z, nine fractional digits)
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE q_at > CAST(N''2026-03-01T10:00:00.05+00:00'' AS DATETIMEOFFSET(7)) AND q_at < CAST(N''2026-03-01T10:00:00.9Z'' AS DATETIMEOFFSET(7))) <> 3 THROW 51000, N''expected 3'', 1;');
  PRINT N'OK   check 32: points in time compare by instant (Z, nine fractional digits)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 32: points in time compare by instant (Z, nine fractional digits): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 33: points in time with a +02:00 offset compare by instant where no index is
BEGIN TRY
  EXEC(N'IF (SELECT COUNT(*) FROM ferret_check.pc_doc_reading WHERE TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2 LIKE N''%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%'' THEN STUFF(JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N''%[^0-9]%'', SUBSTRING(JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'''') ELSE JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2 END, 127) > CAST(N''2026-03-01T10:00:00.05+00:00'' AS DATETIMEOFFSET(7)) AND TRY_CONVERT(DATETIMEOFFSET(7), CASE WHEN JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2 LIKE N''%.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]%'' THEN STUFF(JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2) + 8, PATINDEX(N''%[^0-9]%'', SUBSTRING(JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2, CHARINDEX(N''.'', JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2) + 1, 4000)) - 1 - 7, N'''') ELSE JSON_VALUE(data, ''$."local"'') COLLATE Latin1_General_100_BIN2 END, 127) < CAST(N''2026-03-01T10:00:00.9Z'' AS DATETIMEOFFSET(7))) <> 3 THROW 51000, N''expected 3'', 1;');
  PRINT N'OK   check 33: points in time with a +02:00 offset compare by instant where no index is';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 33: points in time with a +02:00 offset compare by instant where no index is: ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 34: the unique index refuses a second document of owner 'a'
BEGIN TRY
  EXEC(N'BEGIN TRY EXEC sp_executesql N''MERGE ferret_check.pc_doc_reading WITH (HOLDLOCK) AS target USING (VALUES (@p1, @p2, @p3, @p4)) AS source (id, tenant_id, data, last_modified) ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.data = source.data, target.version = target.version + 1, target.last_modified = source.last_modified WHEN NOT MATCHED THEN INSERT (id, tenant_id, data, version, last_modified) VALUES (source.id, source.tenant_id, source.data, 1, source.last_modified);'', N''@p1 nvarchar(250), @p2 nvarchar(100), @p3 nvarchar(max), @p4 datetimeoffset'', N''twin'', N''*DEFAULT*'', N''{"amount":1,"id":"twin","owner":"a"}'', SYSDATETIMEOFFSET(); END TRY BEGIN CATCH IF ERROR_NUMBER() IN (2601, 2627) RETURN; THROW; END CATCH; THROW 51000, N''a duplicate owner was stored'', 1;');
  PRINT N'OK   check 34: the unique index refuses a second document of owner ''a''';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 34: the unique index refuses a second document of owner ''a'': ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 35: an append inserts its event and takes its owner lock in its transaction (one batch)
BEGIN TRY
  EXEC(N'DECLARE @lowest TABLE (seq bigint); BEGIN TRANSACTION; EXEC sp_executesql N''INSERT INTO ferret_check.pc_events (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, @p10, @p11)'', N''@p1 nvarchar(36), @p2 nvarchar(250), @p3 bigint, @p4 nvarchar(250), @p5 nvarchar(max), @p6 datetimeoffset, @p7 nvarchar(100), @p8 bigint, @p9 nvarchar(250), @p10 nvarchar(250), @p11 nvarchar(max)'', N''6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a11'', N''s-1'', 1, N''Noted'', N''{"id":"s-1"}'', SYSDATETIMEOFFSET(), N''*DEFAULT*'', NULL, NULL, NULL, NULL; INSERT INTO @lowest EXEC sp_executesql N''SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = @p1, @seq bigint, @lowest bigint, @resource nvarchar(255), @result int; DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR SELECT seq_id FROM ferret_check.pc_events WHERE tenant_id = @p2 AND stream_id = @p3 AND version >= @p4 AND version <= @p5; OPEN drawn; FETCH NEXT FROM drawn INTO @seq; WHILE @@FETCH_STATUS = 0 BEGIN IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq; SET @resource = CONCAT(@prefix, @seq); EXEC @result = sp_getapplock @Resource = @resource, @LockMode = ''''Exclusive'''', @LockOwner = ''''Transaction'''', @LockTimeout = 30000; IF @result < 0 THROW 51000, ''''sp_getapplock on a sequence owner lock failed'''', 1; FETCH NEXT FROM drawn INTO @seq; END; CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;'', N''@p1 nvarchar(200), @p2 nvarchar(100), @p3 nvarchar(250), @p4 bigint, @p5 bigint'', N''ferret:seq:ferret_check.pc_:'', N''*DEFAULT*'', N''s-1'', 1, 1; IF (SELECT seq FROM @lowest) <> (SELECT MAX(seq_id) FROM ferret_check.pc_events) THROW 51000, N''the owner lock batch returned another sequence'', 1; COMMIT;');
  PRINT N'OK   check 35: an append inserts its event and takes its owner lock in its transaction (one batch)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 35: an append inserts its event and takes its owner lock in its transaction (one batch): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 36: the detector claims a committed append's owner lock (0: none held)
BEGIN TRY
  EXEC(N'DECLARE @held TABLE (held int); BEGIN TRANSACTION; INSERT INTO @held EXEC sp_executesql N''SET NOCOUNT ON; DECLARE @seq bigint = @p1, @to bigint = @p2, @prefix nvarchar(200) = @p3, @resource nvarchar(255), @result int, @held int = 0, @opened int; SELECT @opened = COUNT(*) FROM ferret_check.pc_event_progression WHERE name = N''''HighWaterMark''''; WHILE @seq <= @to AND @held = 0 BEGIN SET @resource = CONCAT(@prefix, @seq); IF APPLOCK_TEST(''''public'''', @resource, ''''Exclusive'''', ''''Transaction'''') = 0 SET @held = 1 ELSE BEGIN EXEC @result = sp_getapplock @Resource = @resource, @LockMode = ''''Exclusive'''', @LockOwner = ''''Transaction'''', @LockTimeout = 0; IF @result < 0 SET @held = 1; END; SET @seq = @seq + 1; END; SELECT @held;'', N''@p1 bigint, @p2 bigint, @p3 nvarchar(200)'', 1, 1, N''ferret:seq:ferret_check.pc_:''; IF (SELECT held FROM @held) <> 0 THROW 51000, N''a committed append still holds its lock'', 1; COMMIT;');
  PRINT N'OK   check 36: the detector claims a committed append''s owner lock (0: none held)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 36: the detector claims a committed append''s owner lock (0: none held): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 37: the high water mark reads the log with locking reads (READCOMMITTEDLOCK, READPAST)
BEGIN TRY
  EXEC(N'DECLARE @mark TABLE (gap_at bigint, after_gap bigint, highest bigint); INSERT INTO @mark EXEC sp_executesql N''SELECT MIN(CASE WHEN next_seq > seq_id + 1 THEN seq_id END) AS gap_at, MIN(CASE WHEN next_seq > seq_id + 1 THEN next_seq END) AS after_gap, MAX(seq_id) AS highest FROM (SELECT seq_id, LEAD(seq_id) OVER (ORDER BY seq_id) AS next_seq FROM (SELECT CAST(@p1 AS BIGINT) AS seq_id UNION ALL SELECT seq_id FROM ferret_check.pc_events WITH (READCOMMITTEDLOCK, READPAST) WHERE seq_id > @p2) AS candidates) AS ordered'', N''@p1 bigint, @p2 bigint'', 0, 0; IF (SELECT highest FROM @mark) <> 1 OR (SELECT gap_at FROM @mark) IS NOT NULL THROW 51000, N''the mark is not 1 without a gap'', 1;');
  PRINT N'OK   check 37: the high water mark reads the log with locking reads (READCOMMITTEDLOCK, READPAST)';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 37: the high water mark reads the log with locking reads (READCOMMITTEDLOCK, READPAST): ' + ERROR_MESSAGE();
END CATCH;
GO

-- check 38: a unit of work of two streams is one statement per step: heads, events in order, owner locks, read-back; every value stored exactly
BEGIN TRY
  EXEC(N'DECLARE @now datetimeoffset = SYSDATETIMEOFFSET(); DECLARE @lowest TABLE (seq bigint); DECLARE @drawn TABLE (stream_id nvarchar(250), version bigint, seq bigint); BEGIN TRANSACTION; EXEC sp_executesql N''MERGE ferret_check.pc_streams WITH (HOLDLOCK) AS target USING (SELECT @p1 AS tenant_id, @p2 AS timestamp, @p3 AS created, s.id, s.type, s.n FROM OPENJSON(@p4) WITH (id NVARCHAR(250), type NVARCHAR(MAX), n BIGINT) AS s) AS source ON target.tenant_id = source.tenant_id COLLATE Latin1_General_100_BIN2 AND target.id = source.id COLLATE Latin1_General_100_BIN2 WHEN MATCHED THEN UPDATE SET target.version = target.version + source.n, target.timestamp = source.timestamp WHEN NOT MATCHED THEN INSERT (id, tenant_id, type, version, timestamp, created) VALUES (source.id, source.tenant_id, source.type, source.n, source.timestamp, source.created) OUTPUT inserted.id, inserted.version;'', N''@p1 nvarchar(100), @p2 datetimeoffset, @p3 datetimeoffset, @p4 nvarchar(max)'', N''*DEFAULT*'', @now, @now, N''[{"id":"batch-a","type":"Order","n":2},{"id":"batch-b","type":null,"n":1}]''; EXEC sp_executesql N''INSERT INTO ferret_check.pc_events (id, stream_id, version, type, data, timestamp, tenant_id, tenant_seq, correlation_id, causation_id, headers) SELECT CAST(e.id AS UNIQUEIDENTIFIER), e.stream_id, e.version, e.type, e.data, @p1, @p2, e.tenant_seq, e.correlation_id, e.causation_id, e.headers FROM OPENJSON(@p3) AS r CROSS APPLY OPENJSON(r.value) WITH (id NVARCHAR(36), stream_id NVARCHAR(MAX), version BIGINT, type NVARCHAR(MAX), data NVARCHAR(MAX), tenant_seq BIGINT, correlation_id NVARCHAR(MAX), causation_id NVARCHAR(MAX), headers NVARCHAR(MAX)) AS e ORDER BY CAST(r.[key] AS INT)'', N''@p1 datetimeoffset, @p2 nvarchar(100), @p3 nvarchar(max)'', @now, N''*DEFAULT*'', N''[{"id":"6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a12","stream_id":"batch-a","version":1,"type":"Noted","data":"{\"text\":\"say \\\"hi\\\" -- ''''quoted''''\",\"path\":\"C:\\\\temp\"}","tenant_seq":null,"correlation_id":"corr-1","causation_id":null,"headers":"{\"h\":\"v \\\"1\\\"\"}"},{"id":"6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a13","stream_id":"batch-a","version":2,"type":"Noted","data":"{\"at\":\"2026-03-01T12:00:00.123456789+02:00\",\"u\":\"\\u00fc\"}","tenant_seq":null,"correlation_id":"corr-1","causation_id":null,"headers":"{\"h\":\"v \\\"1\\\"\"}"},{"id":"6f1c1e64-0f43-4a49-9f0e-0d7f6d3c2a14","stream_id":"batch-b","version":1,"type":"Noted","data":"[]","tenant_seq":null,"correlation_id":null,"causation_id":null,"headers":null}]''; INSERT INTO @lowest EXEC sp_executesql N''SET NOCOUNT ON; DECLARE @prefix nvarchar(200) = @p1, @seq bigint, @lowest bigint, @resource nvarchar(255), @result int; DECLARE drawn CURSOR LOCAL FAST_FORWARD FOR SELECT e.seq_id FROM OPENJSON(@p2) WITH (stream_id NVARCHAR(250), first_version BIGINT, last_version BIGINT) AS a JOIN ferret_check.pc_events e ON e.stream_id = a.stream_id COLLATE Latin1_General_100_BIN2 AND e.version >= a.first_version AND e.version <= a.last_version WHERE e.tenant_id = @p3; OPEN drawn; FETCH NEXT FROM drawn INTO @seq; WHILE @@FETCH_STATUS = 0 BEGIN IF @lowest IS NULL OR @seq < @lowest SET @lowest = @seq; SET @resource = CONCAT(@prefix, @seq); EXEC @result = sp_getapplock @Resource = @resource, @LockMode = ''''Exclusive'''', @LockOwner = ''''Transaction'''', @LockTimeout = 30000; IF @result < 0 THROW 51000, ''''sp_getapplock on a sequence owner lock failed'''', 1; FETCH NEXT FROM drawn INTO @seq; END; CLOSE drawn; DEALLOCATE drawn; SELECT @lowest;'', N''@p1 nvarchar(200), @p2 nvarchar(max), @p3 nvarchar(100)'', N''ferret:seq:ferret_check.pc_:'', N''[{"stream_id":"batch-a","first_version":1,"last_version":2},{"stream_id":"batch-b","first_version":1,"last_version":1}]'', N''*DEFAULT*''; INSERT INTO @drawn EXEC sp_executesql N''SELECT e.stream_id, e.version, e.seq_id FROM OPENJSON(@p1) WITH (stream_id NVARCHAR(250), first_version BIGINT, last_version BIGINT) AS a JOIN ferret_check.pc_events e ON e.stream_id = a.stream_id COLLATE Latin1_General_100_BIN2 AND e.version >= a.first_version AND e.version <= a.last_version WHERE e.tenant_id = @p2'', N''@p1 nvarchar(max), @p2 nvarchar(100)'', N''[{"stream_id":"batch-a","first_version":1,"last_version":2},{"stream_id":"batch-b","first_version":1,"last_version":1}]'', N''*DEFAULT*''; IF (SELECT STRING_AGG(CONCAT(e.stream_id, N''@'', e.version), N'','') WITHIN GROUP (ORDER BY e.seq_id) FROM ferret_check.pc_events e WHERE e.stream_id IN (N''batch-a'', N''batch-b'')) <> N''batch-a@1,batch-a@2,batch-b@1'' THROW 51000, N''the events are not numbered in the rows'''' order'', 1; IF (SELECT seq FROM @lowest) <> (SELECT MIN(e.seq_id) FROM ferret_check.pc_events e WHERE e.stream_id IN (N''batch-a'', N''batch-b'')) THROW 51000, N''the owner lock batch returned another sequence'', 1; IF (SELECT COUNT(*) FROM @drawn d JOIN ferret_check.pc_events e ON e.seq_id = d.seq AND e.stream_id = d.stream_id AND e.version = d.version) <> 3 THROW 51000, N''the read-back missed an event'', 1; IF (SELECT STRING_AGG(CONCAT(s.id, N''@'', s.version, N'':'', s.type), N'','') WITHIN GROUP (ORDER BY s.id) FROM ferret_check.pc_streams s WHERE s.id IN (N''batch-a'', N''batch-b'')) <> N''batch-a@2:Order,batch-b@1:'' THROW 51000, N''the stream heads are wrong'', 1; IF (SELECT COUNT(*) FROM ferret_check.pc_events e WHERE e.stream_id = N''batch-a'' AND e.data IN (N''{"text":"say \"hi\" -- ''''quoted''''","path":"C:\\temp"}'', N''{"at":"2026-03-01T12:00:00.123456789+02:00","u":"\u00fc"}'') AND e.headers = N''{"h":"v \"1\""}'' AND e.correlation_id = N''corr-1'' AND e.causation_id IS NULL AND e.tenant_seq IS NULL AND e.timestamp = @now) <> 2 OR (SELECT COUNT(*) FROM ferret_check.pc_events e WHERE e.stream_id = N''batch-b'' AND e.data = N''[]'' AND e.headers IS NULL AND e.id = ''6F1C1E64-0F43-4A49-9F0E-0D7F6D3C2A14'') <> 1 THROW 51000, N''a value changed on its way'', 1; COMMIT;');
  PRINT N'OK   check 38: a unit of work of two streams is one statement per step: heads, events in order, owner locks, read-back; every value stored exactly';
END TRY
BEGIN CATCH
  IF @@TRANCOUNT > 0 ROLLBACK;
  PRINT N'FAIL check 38: a unit of work of two streams is one statement per step: heads, events in order, owner locks, read-back; every value stored exactly: ' + ERROR_MESSAGE();
END CATCH;
GO

DECLARE @drop nvarchar(max) = N'';
SELECT @drop += N'DROP TABLE ferret_check.' + QUOTENAME(name) + N'; ' FROM sys.tables WHERE schema_id = SCHEMA_ID(N'ferret_check');
EXEC(@drop);
IF SCHEMA_ID(N'ferret_check') IS NOT NULL EXEC(N'DROP SCHEMA ferret_check');
GO

