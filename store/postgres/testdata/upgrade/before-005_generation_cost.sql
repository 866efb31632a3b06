--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: bump_revision(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.bump_revision() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
	IF current_setting('canvas.revision_bumped', true) IS DISTINCT FROM 'yes' THEN
		PERFORM set_config('canvas.revision_bumped', 'yes', true);
		UPDATE revision SET value = value + 1 WHERE id = 1;
	END IF;
	RETURN NULL;
END;
$$;


--
-- Name: jobs_delivery_end(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.jobs_delivery_end() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
	UPDATE webhook_deliveries SET
		status = CASE NEW.status WHEN 'succeeded' THEN 'succeeded' ELSE 'failed' END,
		last_error = CASE NEW.status
			WHEN 'succeeded' THEN NULL
			WHEN 'cancelled' THEN 'delivery job cancelled'
			ELSE COALESCE(NULLIF(NEW.last_error, ''), last_error, 'delivery job failed') END,
		updated_at = NEW.updated_at
	WHERE id = NEW.delivery_id AND workspace_id = NEW.workspace_id AND status = 'pending'
		AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.delivery_id = NEW.delivery_id AND j.id <> NEW.id
			AND j.status IN ('queued', 'running'));
	RETURN NULL;
END;
$$;


--
-- Name: json_or_null(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.json_or_null(t text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
	RETURN t::jsonb;
EXCEPTION WHEN others THEN
	RETURN NULL;
END;
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id text NOT NULL,
    workspace_id text NOT NULL,
    role text NOT NULL,
    projects text,
    hash text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone
);


--
-- Name: application_secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.application_secrets (
    id text NOT NULL,
    application_id text NOT NULL,
    value text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone
);


--
-- Name: applications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.applications (
    id text NOT NULL,
    workspace_id text NOT NULL,
    name text NOT NULL,
    prompt_id text,
    environment_name text NOT NULL,
    events_enabled boolean DEFAULT false NOT NULL,
    events_url text DEFAULT ''::text NOT NULL,
    events_headers text DEFAULT '[]'::text NOT NULL,
    events_types text DEFAULT '[]'::text NOT NULL,
    consecutive_failures bigint DEFAULT 0 NOT NULL,
    disabled_at timestamp with time zone,
    disabled_reason text,
    created_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);


--
-- Name: blob_chunks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blob_chunks (
    key text NOT NULL,
    n bigint NOT NULL,
    data bytea NOT NULL
);


--
-- Name: canvases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.canvases (
    id text NOT NULL,
    workspace_id text NOT NULL,
    project_id text,
    title text NOT NULL,
    inferences_percentage text NOT NULL,
    layout_version text NOT NULL,
    custom_tags text DEFAULT '[]'::text NOT NULL,
    allowed_credentials text,
    version_seq bigint DEFAULT 0 NOT NULL,
    created_by text NOT NULL,
    updated_by text NOT NULL,
    deleted_by text,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);


--
-- Name: credentials; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.credentials (
    id text NOT NULL,
    workspace_id text NOT NULL,
    name text NOT NULL,
    provider text NOT NULL,
    base_url text,
    project_ids text,
    settings text DEFAULT '{}'::text NOT NULL,
    key_hint text,
    sealed bytea,
    nonce bytea,
    kek_id text,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    created_by text NOT NULL,
    updated_by text NOT NULL,
    last_used_at timestamp with time zone,
    deleted_at timestamp with time zone
);


--
-- Name: environments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.environments (
    id text NOT NULL,
    canvas_id text NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    is_system boolean DEFAULT false NOT NULL,
    last_seq bigint DEFAULT 0 NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: favorites; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.favorites (
    user_id text NOT NULL,
    canvas_id text NOT NULL
);


--
-- Name: files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.files (
    id text NOT NULL,
    workspace_id text NOT NULL,
    file_name text NOT NULL,
    status text NOT NULL,
    mime_type text DEFAULT ''::text NOT NULL,
    size bigint DEFAULT 0 NOT NULL,
    sha256 text DEFAULT ''::text NOT NULL,
    blob_key text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    uploaded_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    seq bigint NOT NULL
);


--
-- Name: files_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.files ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.files_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: generations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.generations (
    id text NOT NULL,
    workspace_id text NOT NULL,
    test_case_id text NOT NULL,
    prompt_id text NOT NULL,
    prompt_version_id text NOT NULL,
    execution_id text NOT NULL,
    status text NOT NULL,
    output text,
    error text,
    usage text,
    latency_ms bigint,
    passed boolean,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    workspace_id text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    status bigint DEFAULT 0 NOT NULL,
    content_type text DEFAULT ''::text NOT NULL,
    body bytea,
    created_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone,
    owner text DEFAULT ''::text NOT NULL,
    ref_id text DEFAULT ''::text NOT NULL
);


--
-- Name: idempotency_owners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_owners (
    id text NOT NULL,
    lease_until timestamp with time zone NOT NULL
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id text NOT NULL COLLATE pg_catalog."C",
    workspace_id text DEFAULT ''::text NOT NULL,
    kind text NOT NULL,
    ref_id text DEFAULT ''::text NOT NULL,
    payload text,
    status text NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    max_attempts bigint NOT NULL,
    run_at timestamp with time zone NOT NULL,
    lease_owner text,
    lease_until timestamp with time zone,
    last_error text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    delivery_id text,
    trace text DEFAULT ''::text NOT NULL
);


--
-- Name: messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.messages (
    id text NOT NULL,
    version_id text NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    markdown_content text,
    idx bigint DEFAULT 0 NOT NULL,
    created_by text NOT NULL,
    updated_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);


--
-- Name: model_prices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.model_prices (
    workspace_id text NOT NULL,
    name text NOT NULL,
    provider text NOT NULL,
    input_per_million double precision NOT NULL,
    output_per_million double precision NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    updated_by text NOT NULL
);


--
-- Name: projects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projects (
    id text NOT NULL,
    workspace_id text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: publications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.publications (
    id text NOT NULL,
    environment_id text NOT NULL,
    version_id text NOT NULL,
    seq bigint NOT NULL,
    is_active boolean NOT NULL,
    published_at timestamp with time zone NOT NULL,
    published_by text NOT NULL,
    unpublished_at timestamp with time zone
);


--
-- Name: revision; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.revision (
    id integer NOT NULL,
    value bigint NOT NULL,
    CONSTRAINT revision_id_check CHECK ((id = 1))
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    id text NOT NULL,
    workspace_id text NOT NULL,
    kind text NOT NULL,
    canvas_id text DEFAULT ''::text NOT NULL,
    version_id text DEFAULT ''::text NOT NULL,
    environment_name text DEFAULT ''::text NOT NULL,
    application_id text DEFAULT ''::text NOT NULL,
    model text NOT NULL,
    status text NOT NULL,
    async boolean NOT NULL,
    request text NOT NULL,
    result text,
    error text,
    input_tokens bigint DEFAULT 0 NOT NULL,
    output_tokens bigint DEFAULT 0 NOT NULL,
    latency_ms bigint DEFAULT 0 NOT NULL,
    webhook_url text DEFAULT ''::text NOT NULL,
    forward_headers text,
    created_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone,
    seq bigint NOT NULL,
    credential_id text DEFAULT ''::text NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    cost_input double precision,
    cost_output double precision,
    cost_total double precision
);


--
-- Name: runs_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.runs ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.runs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    name text NOT NULL,
    applied_at timestamp with time zone NOT NULL
);


--
-- Name: secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.secrets (
    name text NOT NULL,
    value bytea NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: test_case_tag_assignments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.test_case_tag_assignments (
    test_case_id text NOT NULL,
    tag_id text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: test_case_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.test_case_tags (
    id text NOT NULL,
    workspace_id text NOT NULL,
    prompt_id text NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    color text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);


--
-- Name: test_cases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.test_cases (
    id text NOT NULL,
    workspace_id text NOT NULL,
    prompt_id text NOT NULL,
    title text NOT NULL,
    messages text,
    variables text,
    variables_rich_content text,
    files text,
    expected_output text,
    evaluator text,
    answers text,
    prompt_application_id text,
    metadata text,
    created_by text NOT NULL,
    updated_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);


--
-- Name: versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.versions (
    id text NOT NULL,
    canvas_id text NOT NULL,
    version_index bigint NOT NULL,
    title text NOT NULL,
    title_locked boolean DEFAULT false NOT NULL,
    configuration text DEFAULT '{}'::text NOT NULL,
    variables text DEFAULT '[]'::text NOT NULL,
    draft boolean DEFAULT false NOT NULL,
    origin_version_id text,
    workflow_spec text,
    graph text,
    is_workflow boolean DEFAULT false NOT NULL,
    created_by text NOT NULL,
    updated_by text NOT NULL,
    deleted_by text,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    deleted_at timestamp with time zone
);


--
-- Name: webhook_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_attempts (
    delivery_id text NOT NULL,
    number bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    status_code bigint,
    latency_ms bigint NOT NULL,
    error text,
    response_body text NOT NULL
);


--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    seq bigint NOT NULL,
    id text NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    application_id text,
    event_type text NOT NULL,
    url text NOT NULL,
    status text NOT NULL,
    attempt_count bigint DEFAULT 0 NOT NULL,
    last_error text,
    payload text NOT NULL,
    event text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);


--
-- Name: webhook_deliveries_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.webhook_deliveries ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.webhook_deliveries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: workflow_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workflow_runs (
    id text NOT NULL,
    external_id text,
    workspace_id text NOT NULL,
    canvas_id text NOT NULL,
    version_id text NOT NULL,
    environment text NOT NULL,
    status text NOT NULL,
    input text NOT NULL,
    start_node_id text DEFAULT ''::text NOT NULL,
    end_node_id text DEFAULT ''::text NOT NULL,
    output_node_id text DEFAULT ''::text NOT NULL,
    error text,
    webhook_url text DEFAULT ''::text NOT NULL,
    forward_headers text,
    application_id text DEFAULT ''::text NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone,
    deadline timestamp with time zone NOT NULL,
    seq bigint NOT NULL
);


--
-- Name: workflow_runs_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.workflow_runs ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.workflow_runs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: workflow_steps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workflow_steps (
    run_id text NOT NULL,
    id text NOT NULL,
    seq bigint NOT NULL,
    name text NOT NULL,
    action_id text NOT NULL,
    status text NOT NULL,
    input text,
    output text,
    error text,
    metadata text,
    ports text,
    started_at timestamp with time zone,
    completed_at timestamp with time zone
);


--
-- Name: workspaces; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workspaces (
    id text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Data for Name: api_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: application_secrets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: applications; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: blob_chunks; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: canvases; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.canvases VALUES ('c-1', 'ws-1', 'p-1', 'Support bot', '100', '2', '["faq"]', NULL, 2, 'u-1', 'u-1', NULL, '2025-06-01 10:00:02+00', '2025-06-01 10:00:04+00', NULL);


--
-- Data for Name: credentials; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: environments; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.environments VALUES ('e-1', 'c-1', 'production', true, 2, 'u-1', '2025-06-01 10:00:02+00');


--
-- Data for Name: favorites; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: files; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: generations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: idempotency_owners; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: messages; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.messages VALUES ('m-1', 'v-1', 'system', 'Hello {{name}}', NULL, 0, 'u-1', 'u-1', '2025-06-01 10:00:03+00', '2025-06-01 10:00:03+00', NULL);
INSERT INTO public.messages VALUES ('m-2', 'v-2', 'system', 'Hi {{name}}', NULL, 0, 'u-1', 'u-1', '2025-06-01 10:00:04+00', '2025-06-01 10:00:04+00', NULL);
INSERT INTO public.messages VALUES ('m-3', 'v-2', 'user', 'And welcome', NULL, 1, 'u-1', 'u-1', '2025-06-01 10:00:04+00', '2025-06-01 10:00:04+00', NULL);


--
-- Data for Name: model_prices; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: projects; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.projects VALUES ('p-1', 'ws-1', 'support', '2025-06-01 10:00:01+00');


--
-- Data for Name: publications; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.publications VALUES ('pub-1', 'e-1', 'v-1', 1, false, '2025-06-01 10:00:05+00', 'u-1', '2025-06-01 10:00:06+00');
INSERT INTO public.publications VALUES ('pub-2', 'e-1', 'v-2', 2, true, '2025-06-01 10:00:06+00', 'u-1', NULL);


--
-- Data for Name: revision; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.revision VALUES (1, 1);


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES ('001_schema.sql', '2026-11-28 01:03:34.708005+00');
INSERT INTO public.schema_migrations VALUES ('002_lists.sql', '2026-11-28 01:03:34.798835+00');
INSERT INTO public.schema_migrations VALUES ('003_credentials.sql', '2026-11-28 01:03:34.877775+00');
INSERT INTO public.schema_migrations VALUES ('004_run_cost.sql', '2026-11-28 01:03:34.879686+00');


--
-- Data for Name: secrets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: test_case_tag_assignments; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: test_case_tags; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: test_cases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: versions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.versions VALUES ('v-1', 'c-1', 1, 'First', false, '{"model":"echo","temperature":0.2}', '[{"name":"name","type":"text"}]', false, NULL, NULL, NULL, false, 'u-1', 'u-1', NULL, '2025-06-01 10:00:03+00', '2025-06-01 10:00:03+00', NULL);
INSERT INTO public.versions VALUES ('v-2', 'c-1', 2, 'Second', false, '{"model":"echo"}', '[]', false, NULL, NULL, NULL, false, 'u-1', 'u-1', NULL, '2025-06-01 10:00:04+00', '2025-06-01 10:00:04+00', NULL);


--
-- Data for Name: webhook_attempts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workflow_runs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workflow_steps; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workspaces; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.workspaces VALUES ('ws-1', 'default', '2025-06-01 10:00:00+00');


--
-- Name: files_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.files_seq_seq', 1, false);


--
-- Name: runs_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runs_seq_seq', 1, false);


--
-- Name: webhook_deliveries_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.webhook_deliveries_seq_seq', 1, false);


--
-- Name: workflow_runs_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.workflow_runs_seq_seq', 1, false);


--
-- Name: api_keys api_keys_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_hash_key UNIQUE (hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: application_secrets application_secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.application_secrets
    ADD CONSTRAINT application_secrets_pkey PRIMARY KEY (id);


--
-- Name: applications applications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.applications
    ADD CONSTRAINT applications_pkey PRIMARY KEY (id);


--
-- Name: blob_chunks blob_chunks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blob_chunks
    ADD CONSTRAINT blob_chunks_pkey PRIMARY KEY (key, n);


--
-- Name: canvases canvases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.canvases
    ADD CONSTRAINT canvases_pkey PRIMARY KEY (id);


--
-- Name: credentials credentials_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credentials
    ADD CONSTRAINT credentials_pkey PRIMARY KEY (id);


--
-- Name: environments environments_canvas_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_canvas_id_name_key UNIQUE (canvas_id, name);


--
-- Name: environments environments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_pkey PRIMARY KEY (id);


--
-- Name: favorites favorites_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.favorites
    ADD CONSTRAINT favorites_pkey PRIMARY KEY (user_id, canvas_id);


--
-- Name: files files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (id);


--
-- Name: files files_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_seq_key UNIQUE (seq);


--
-- Name: generations generations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.generations
    ADD CONSTRAINT generations_pkey PRIMARY KEY (id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (workspace_id, key);


--
-- Name: idempotency_owners idempotency_owners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_owners
    ADD CONSTRAINT idempotency_owners_pkey PRIMARY KEY (id);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);


--
-- Name: model_prices model_prices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.model_prices
    ADD CONSTRAINT model_prices_pkey PRIMARY KEY (workspace_id, name);


--
-- Name: projects projects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (id);


--
-- Name: publications publications_environment_id_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publications
    ADD CONSTRAINT publications_environment_id_seq_key UNIQUE (environment_id, seq);


--
-- Name: publications publications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publications
    ADD CONSTRAINT publications_pkey PRIMARY KEY (id);


--
-- Name: revision revision_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.revision
    ADD CONSTRAINT revision_pkey PRIMARY KEY (id);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: runs runs_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_seq_key UNIQUE (seq);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (name);


--
-- Name: secrets secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_pkey PRIMARY KEY (name);


--
-- Name: test_case_tag_assignments test_case_tag_assignments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tag_assignments
    ADD CONSTRAINT test_case_tag_assignments_pkey PRIMARY KEY (test_case_id, tag_id);


--
-- Name: test_case_tags test_case_tags_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tags
    ADD CONSTRAINT test_case_tags_pkey PRIMARY KEY (id);


--
-- Name: test_cases test_cases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_cases
    ADD CONSTRAINT test_cases_pkey PRIMARY KEY (id);


--
-- Name: versions versions_canvas_id_version_index_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.versions
    ADD CONSTRAINT versions_canvas_id_version_index_key UNIQUE (canvas_id, version_index);


--
-- Name: versions versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.versions
    ADD CONSTRAINT versions_pkey PRIMARY KEY (id);


--
-- Name: webhook_attempts webhook_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, number);


--
-- Name: webhook_deliveries webhook_deliveries_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_id_key UNIQUE (id);


--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (seq);


--
-- Name: workflow_runs workflow_runs_external_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_runs
    ADD CONSTRAINT workflow_runs_external_id_key UNIQUE (external_id);


--
-- Name: workflow_runs workflow_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_runs
    ADD CONSTRAINT workflow_runs_pkey PRIMARY KEY (id);


--
-- Name: workflow_runs workflow_runs_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_runs
    ADD CONSTRAINT workflow_runs_seq_key UNIQUE (seq);


--
-- Name: workflow_steps workflow_steps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_steps
    ADD CONSTRAINT workflow_steps_pkey PRIMARY KEY (run_id, id);


--
-- Name: workspaces workspaces_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_name_key UNIQUE (name);


--
-- Name: workspaces workspaces_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_pkey PRIMARY KEY (id);


--
-- Name: api_keys_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_workspace ON public.api_keys USING btree (workspace_id, created_at);


--
-- Name: application_secrets_application; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX application_secrets_application ON public.application_secrets USING btree (application_id, created_at);


--
-- Name: applications_prompt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX applications_prompt ON public.applications USING btree (workspace_id, prompt_id);


--
-- Name: applications_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX applications_workspace ON public.applications USING btree (workspace_id, created_at, id);


--
-- Name: canvases_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX canvases_workspace ON public.canvases USING btree (workspace_id, created_at DESC, id) WHERE (deleted_at IS NULL);


--
-- Name: credentials_kek; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credentials_kek ON public.credentials USING btree (kek_id, id) WHERE (sealed IS NOT NULL);


--
-- Name: credentials_live_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX credentials_live_name ON public.credentials USING btree (workspace_id, name) WHERE (deleted_at IS NULL);


--
-- Name: credentials_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credentials_workspace ON public.credentials USING btree (workspace_id, created_at, id);


--
-- Name: files_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX files_workspace ON public.files USING btree (workspace_id, created_at, seq);


--
-- Name: generations_execution; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX generations_execution ON public.generations USING btree (workspace_id, execution_id);


--
-- Name: generations_test_case; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX generations_test_case ON public.generations USING btree (workspace_id, test_case_id, created_at);


--
-- Name: idempotency_keys_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);


--
-- Name: idempotency_owners_lease; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_owners_lease ON public.idempotency_owners USING btree (lease_until);


--
-- Name: jobs_backlog; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_backlog ON public.jobs USING btree (workspace_id, kind) WHERE (status = 'queued'::text);


--
-- Name: jobs_delivery; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_delivery ON public.jobs USING btree (delivery_id) WHERE (delivery_id IS NOT NULL);


--
-- Name: jobs_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_ended ON public.jobs USING btree (updated_at) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text]));


--
-- Name: jobs_queued; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_queued ON public.jobs USING btree (run_at, created_at, id, kind) WHERE (status = 'queued'::text);


--
-- Name: jobs_ref; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_ref ON public.jobs USING btree (ref_id);


--
-- Name: jobs_running; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_running ON public.jobs USING btree (run_at, created_at, id, kind) WHERE (status = 'running'::text);


--
-- Name: messages_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX messages_version ON public.messages USING btree (version_id, idx, created_at) WHERE (deleted_at IS NULL);


--
-- Name: projects_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX projects_workspace ON public.projects USING btree (workspace_id, created_at);


--
-- Name: publications_active_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX publications_active_version ON public.publications USING btree (version_id) WHERE is_active;


--
-- Name: publications_one_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX publications_one_active ON public.publications USING btree (environment_id) WHERE is_active;


--
-- Name: runs_canvas; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_canvas ON public.runs USING btree (workspace_id, canvas_id, created_at);


--
-- Name: runs_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_ended ON public.runs USING btree (completed_at) WHERE (status = ANY (ARRAY['completed'::text, 'failed'::text]));


--
-- Name: runs_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_kind ON public.runs USING btree (workspace_id, kind, created_at, seq);


--
-- Name: test_case_tag_assignments_tag; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX test_case_tag_assignments_tag ON public.test_case_tag_assignments USING btree (tag_id, test_case_id);


--
-- Name: test_case_tags_prompt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX test_case_tags_prompt ON public.test_case_tags USING btree (workspace_id, prompt_id, name, id) WHERE (deleted_at IS NULL);


--
-- Name: test_cases_prompt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX test_cases_prompt ON public.test_cases USING btree (workspace_id, prompt_id, created_at, id) WHERE (deleted_at IS NULL);


--
-- Name: webhook_deliveries_application; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_application ON public.webhook_deliveries USING btree (workspace_id, application_id, seq);


--
-- Name: webhook_deliveries_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_ended ON public.webhook_deliveries USING btree (updated_at) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text]));


--
-- Name: webhook_deliveries_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_workspace ON public.webhook_deliveries USING btree (workspace_id, seq);


--
-- Name: workflow_runs_canvas; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workflow_runs_canvas ON public.workflow_runs USING btree (workspace_id, canvas_id, created_at, seq);


--
-- Name: workflow_runs_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workflow_runs_ended ON public.workflow_runs USING btree (completed_at) WHERE (status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text, 'timeout'::text]));


--
-- Name: workflow_runs_external; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workflow_runs_external ON public.workflow_runs USING btree (workspace_id, external_id);


--
-- Name: workflow_runs_workspace; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workflow_runs_workspace ON public.workflow_runs USING btree (workspace_id, created_at, seq);


--
-- Name: workflow_steps_run; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workflow_steps_run ON public.workflow_steps USING btree (run_id, seq, id);


--
-- Name: api_keys api_keys_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER api_keys_revision AFTER INSERT OR DELETE OR UPDATE ON public.api_keys DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: canvases canvases_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER canvases_revision AFTER INSERT OR DELETE OR UPDATE ON public.canvases DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: credentials credentials_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER credentials_revision AFTER INSERT OR DELETE OR UPDATE OF id, workspace_id, name, provider, base_url, project_ids, settings, key_hint, sealed, nonce, kek_id, created_at, updated_at, created_by, updated_by, deleted_at ON public.credentials DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: environments environments_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER environments_revision AFTER INSERT OR DELETE OR UPDATE ON public.environments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: favorites favorites_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER favorites_revision AFTER INSERT OR DELETE OR UPDATE ON public.favorites DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: jobs jobs_delivery_end; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER jobs_delivery_end AFTER UPDATE OF status ON public.jobs FOR EACH ROW WHEN (((new.delivery_id IS NOT NULL) AND (new.status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text])) AND (old.status = ANY (ARRAY['queued'::text, 'running'::text])))) EXECUTE FUNCTION public.jobs_delivery_end();


--
-- Name: messages messages_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER messages_revision AFTER INSERT OR DELETE OR UPDATE ON public.messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: model_prices model_prices_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER model_prices_revision AFTER INSERT OR DELETE OR UPDATE ON public.model_prices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: projects projects_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER projects_revision AFTER INSERT OR DELETE OR UPDATE ON public.projects DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: publications publications_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER publications_revision AFTER INSERT OR DELETE OR UPDATE ON public.publications DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: versions versions_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER versions_revision AFTER INSERT OR DELETE OR UPDATE ON public.versions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: workspaces workspaces_revision; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER workspaces_revision AFTER INSERT OR DELETE OR UPDATE ON public.workspaces DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.bump_revision();


--
-- Name: api_keys api_keys_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: application_secrets application_secrets_application_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.application_secrets
    ADD CONSTRAINT application_secrets_application_id_fkey FOREIGN KEY (application_id) REFERENCES public.applications(id) ON DELETE CASCADE;


--
-- Name: applications applications_prompt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.applications
    ADD CONSTRAINT applications_prompt_id_fkey FOREIGN KEY (prompt_id) REFERENCES public.canvases(id);


--
-- Name: applications applications_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.applications
    ADD CONSTRAINT applications_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: canvases canvases_project_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.canvases
    ADD CONSTRAINT canvases_project_id_fkey FOREIGN KEY (project_id) REFERENCES public.projects(id);


--
-- Name: canvases canvases_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.canvases
    ADD CONSTRAINT canvases_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: credentials credentials_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credentials
    ADD CONSTRAINT credentials_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: environments environments_canvas_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.environments
    ADD CONSTRAINT environments_canvas_id_fkey FOREIGN KEY (canvas_id) REFERENCES public.canvases(id);


--
-- Name: favorites favorites_canvas_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.favorites
    ADD CONSTRAINT favorites_canvas_id_fkey FOREIGN KEY (canvas_id) REFERENCES public.canvases(id);


--
-- Name: files files_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: generations generations_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.generations
    ADD CONSTRAINT generations_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: messages messages_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.messages
    ADD CONSTRAINT messages_version_id_fkey FOREIGN KEY (version_id) REFERENCES public.versions(id);


--
-- Name: model_prices model_prices_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.model_prices
    ADD CONSTRAINT model_prices_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: projects projects_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: publications publications_environment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publications
    ADD CONSTRAINT publications_environment_id_fkey FOREIGN KEY (environment_id) REFERENCES public.environments(id) ON DELETE CASCADE;


--
-- Name: publications publications_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.publications
    ADD CONSTRAINT publications_version_id_fkey FOREIGN KEY (version_id) REFERENCES public.versions(id);


--
-- Name: runs runs_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: test_case_tag_assignments test_case_tag_assignments_tag_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tag_assignments
    ADD CONSTRAINT test_case_tag_assignments_tag_id_fkey FOREIGN KEY (tag_id) REFERENCES public.test_case_tags(id);


--
-- Name: test_case_tag_assignments test_case_tag_assignments_test_case_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tag_assignments
    ADD CONSTRAINT test_case_tag_assignments_test_case_id_fkey FOREIGN KEY (test_case_id) REFERENCES public.test_cases(id);


--
-- Name: test_case_tags test_case_tags_prompt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tags
    ADD CONSTRAINT test_case_tags_prompt_id_fkey FOREIGN KEY (prompt_id) REFERENCES public.canvases(id);


--
-- Name: test_case_tags test_case_tags_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_case_tags
    ADD CONSTRAINT test_case_tags_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: test_cases test_cases_prompt_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_cases
    ADD CONSTRAINT test_cases_prompt_id_fkey FOREIGN KEY (prompt_id) REFERENCES public.canvases(id);


--
-- Name: test_cases test_cases_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.test_cases
    ADD CONSTRAINT test_cases_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: versions versions_canvas_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.versions
    ADD CONSTRAINT versions_canvas_id_fkey FOREIGN KEY (canvas_id) REFERENCES public.canvases(id);


--
-- Name: versions versions_origin_version_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.versions
    ADD CONSTRAINT versions_origin_version_id_fkey FOREIGN KEY (origin_version_id) REFERENCES public.versions(id);


--
-- Name: webhook_attempts webhook_attempts_delivery_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;


--
-- Name: workflow_runs workflow_runs_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_runs
    ADD CONSTRAINT workflow_runs_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: workflow_steps workflow_steps_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workflow_steps
    ADD CONSTRAINT workflow_steps_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.workflow_runs(id);


--
-- PostgreSQL database dump complete
--


