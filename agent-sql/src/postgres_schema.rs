//! The PostgreSQL store's schema, one migration per version.

/// The schema, one migration per version; a database at version `n` runs the migrations after
/// the `n`th (the table `agent_core_schema` keeps `n`). Never edit one that shipped: add the next.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: conversations (with their length, so an append checks it on the row it locks), their
    // messages in order, and the paused run of each.
    "CREATE TABLE agent_core_conversations (
         id text PRIMARY KEY,
         length bigint NOT NULL DEFAULT 0,
         paused text
     );
     CREATE TABLE agent_core_messages (
         conversation text NOT NULL REFERENCES agent_core_conversations (id),
         position bigint NOT NULL,
         body text NOT NULL,
         PRIMARY KEY (conversation, position)
     );",
    // 2: each conversation's title, and when it last changed, for lists of them.
    "ALTER TABLE agent_core_conversations
         ADD COLUMN title text,
         ADD COLUMN updated timestamptz NOT NULL DEFAULT now();",
    // 3: what each conversation's runs used (JSON), and the summaries of its parts, in order,
    // each with the end of the messages it stands for (a cut before that end removes it).
    "ALTER TABLE agent_core_conversations ADD COLUMN usage text;
     CREATE TABLE agent_core_summaries (
         conversation text NOT NULL REFERENCES agent_core_conversations (id),
         position bigint NOT NULL,
         covers_end bigint NOT NULL,
         body text NOT NULL,
         PRIMARY KEY (conversation, position)
     );",
    // 4: the runs its calls started (agents called as tools), in the order they ended, each with
    // the position of the reply that started it (a cut before it removes it).
    "CREATE TABLE agent_core_children (
         conversation text NOT NULL REFERENCES agent_core_conversations (id),
         position bigint NOT NULL,
         started_at bigint NOT NULL,
         body text NOT NULL,
         PRIMARY KEY (conversation, position)
     );",
    // 5: what its last model request sent (JSON): where the context policy cut, and what a
    // prompt cache holds of it.
    "ALTER TABLE agent_core_conversations ADD COLUMN last_request text;",
];
