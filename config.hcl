# clawhost — default configuration. Every setting is documented here; run
# `bin/clawhost validate -config config.hcl` after editing (it checks every
# plugin's config block too, with the plugin's own checks), and send SIGHUP to
# a running clawhost to reload it. A reload checks new and changed plugin
# blocks first; a file with an error is refused whole and the running plugins
# are kept (`clawhost status` shows why).
#
# Relative paths are relative to this file's directory. Every attribute is in
# docs/configuration.md (generated from core/config's field docs).

data_dir   = "./data"   # database, plugin state (0700)
# plugin_dir = "./bin"  # plugin "x" { source = "y" } runs <plugin_dir>/clawhost-y; default: beside the clawhost binary
log_level  = "info"     # trace | debug | info | warn | error
log_format = "text"     # text | json

agent {
  command   = "claude"       # the Claude Code CLI (npm install -g @anthropic-ai/claude-code)
  workspace = "./workspace"  # cwd of every claude run
  # media_keep = "30d"       # inbound attachments (workspace/media/<chat>/) are deleted after this; "0s" keeps them
  # owner_claude_dir = "~/.claude"  # where your own terminal claude keeps its sessions: owners
  #                                 # /continue them in their chat, /desktop hands back (docs/continue.md)
  timeout   = "10m"          # per turn
  # args            = []      # extra CLI flags
  # The bot logs in to Claude on its own, not with your login: either
  #   env = { ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY") }
  # or once, by hand: CLAUDE_CONFIG_DIR=./data/claude claude   then type /login
  # claude keeps its login, settings and transcripts in <data_dir>/claude.
  # settings = "project"  # "project": only workspace/.claude/settings.json applies;
  #                       # "user": your ~/.claude settings (allow rules, hooks, MCP
  #                       # servers) apply to every chat too
  # sandbox  = "auto"     # "auto": claude and its tools run in bubblewrap (apt-get install
  #                       # bubblewrap) when it works here: read-only filesystem but the
  #                       # workspace; data_dir, this file's directory, ~/.claude, other
  #                       # chats' media and claude state invisible (docs/security.md
  #                       # lists what a sandboxed claude sees). Without a working bubblewrap clawhost starts
  #                       # only while nobody but the owners can reach the agent (this
  #                       # file as it is: the web chat on loopback; enabling Telegram,
  #                       # Discord or WhatsApp with dm_policy = "pairing" lets strangers
  #                       # pair). "off": no sandbox, whoever can reach the agent
  # run_as   = "claude-bot"  # when clawhost runs as root: claude runs as this user (it must
  #                          # own the workspace and may enter data_dir: chmod 711 data)
  # claude does not inherit clawhost's environment, only PATH, HOME, USER,
  # LOGNAME, SHELL, LANG, LC_*, TERM, TZ and its own settings when set
  # (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CLAUDE_CONFIG_DIR, the proxy
  # variables, ...; see docs/claude-cli.md). Anything else it or its tools need goes here:
  # env             = { GITHUB_TOKEN = env("GITHUB_TOKEN") }
  # model           = "sonnet"
  # models          = ["opus", "sonnet"]  # what /model offers a chat; unset: any name
  # permission_mode = "default"   # always passed; acceptEdits | auto | bypassPermissions | manual | dontAsk | plan | default
  # permission_modes = ["plan", "acceptEdits"]  # what an owner's /mode may switch a chat to; unset: none.
  #                            # "ask" here lets an owner turn approvals on for one chat (/mode ask).
  # inline_images    = true    # show inbound images to claude (downscaled); their paths are in the prompt anyway
  # approvals        = "chat"  # ask the approvers (Allow / Deny / Always) before a tool use that needs
  #                            # permission; "off" (default): the permission mode decides alone.
  # approval_timeout = "5m"    # an unanswered question is denied after this
  # approvers        = "owners" # who answers: "owners" (default): owners only — another sender's
  #                            # question goes to each owner's direct chat; no owners: denied.
  #                            # "sender": the turn's sender and owners (in a group, a member
  #                            # could approve their own tool use)
  # tools         = ["memory.*"]  # plugin tools this agent is offered: "<plugin>.<tool>" or
  #                               # "<plugin>.*" (default none). They run in the plugin, outside
  #                               # the sandbox (docs/tools.md). claude calls them
  #                               # mcp__clawhost__<plugin>__<tool>, under its permission rules:
  # allowed_tools = ["mcp__clawhost__memory__search"]  # runs without asking
  # idle_timeout    = "30m"  # warm claude processes stop after this
  # warm_memory     = "2GB"  # what the warm claude processes may hold together (~210 MB each, measured
  #                          # after each turn); beyond it the least used idle ones stop. Default: a
  #                          # quarter of the machine's memory (at least 256 MB, at most 16 GB)
  # max_warm        = 4      # also cap them by count; default: no cap (warm_memory alone decides)
  # max_concurrent  = 4
  # Before claude compacts a long conversation by itself (it does so from
  # about 23,000 tokens below the model's window: ~977,000 of 1,000,000),
  # one turn asks it to write durable notes to the workspace. It runs once
  # per compaction cycle when the last prompt reached
  # context_window - reserve_tokens - soft_threshold_tokens.
  # memory_flush {
  #   enabled               = true
  #   context_window        = 0      # 0: what claude reports for the model
  #   reserve_tokens        = 23000  # where claude compacts, below the window
  #   soft_threshold_tokens = 0      # 0: a twentieth of the window, at least 4000
  # }
}

# More agents — one per project, its own workspace, run_as, sandbox, ... — inherit
# every attribute above they do not set (max_concurrent, one_shot, approvers and
# approval_timeout are set above only); chats binds them to chats, groups, topics
# or instances (the most specific wins; the rest talks to the agent above). See docs/agents.md.
# agent "api" {
#   workspace  = "/srv/repos/api"
#   model      = "opus"
#   chats      = ["tg:-1001234567890", "tg:-1001234567890:42"]  # a group; a forum topic
#   switchable = true   # any chat may switch to it with /agent api
#   worktrees  = true   # each chat its own git worktree (branch clawhost/<chat>) of the repository
# }

access {
  # Who may reach the agent in direct messages. "pairing" (default): an
  # unknown sender gets a pairing code (valid for 1 hour) an owner approves
  # with /approve CODE or `clawhost pairing approve CODE`; "allowlist": only
  # owners, allow_from and senders approved before; "open": everyone.
  dm_policy = "pairing"
  # Entries are "<plugin instance>:<sender id>"; "<instance>:*" admits every
  # sender of that instance. The web chat below needs its token (the link
  # clawhost prints at start), so only who has that link can write there.
  allow_from = ["web:*"]
  # Owners are always allowed in direct messages and may /approve; /whoami
  # tells a sender their id, e.g. owners = ["tg:123456789"].
  owners     = []
  # How long an approval through pairing lasts, e.g. "30d"; then the sender
  # pairs again. Default: until revoked (`clawhost pairing revoke tg:ID`,
  # or /revoke tg:ID from an owner). Under "allowlist" approvals are not
  # honoured (kept, honoured again if you switch back).
  # pairing_ttl = "30d"
  # Groups: list them ("<instance>:<group id>"; /whoami in a group prints
  # it, and a group that is not listed shows on the status page). Only the
  # senders named here trigger the agent there (when they mention it):
  # owners, members, allow_from and group_allow_from. Other members'
  # messages are context only, marked untrusted. To let every member of
  # an instance's groups trigger it, write group_allow_from = ["tg:*"].
  # groups           = ["tg:-1001234567890"]
  # group_allow_from = ["tg:123456789"]
  # members also reset, stop and tune group sessions like owners:
  # members          = ["tg:987654321"]
  # One group's own rules (the block also allows it):
  # group "tg:-1009876543210" {
  #   allow_from      = ["tg:123456789"]
  #   require_mention = false
  # }
  # Each sender's flood limit ("/s", "/min", "/hour", "/day"); messages over
  # it are refused and recorded, the sender told once a window. Unset: none.
  # rate = "20/min"
}

# What turns may cost, in US dollars as claude reports it (the usage ledger:
# /usage, clawhost usage). Over a budget a turn does not run and the chat is
# told which budget, how much and when it resets; a running turn is never
# cut. Days and months are those of messages.timezone. The same attributes
# in an agent "<id>" block replace these for that agent's turns.
# budget {
#   per_sender_daily_usd  = 2
#   per_chat_daily_usd    = 5
#   per_agent_monthly_usd = 100
#   warn_at               = 0.8    # warn the chat once a period at 80 %
#   owners                = false  # owners are exempt unless true
# }

# The audit trail (approvals, refusals, role-gated commands, budgets,
# reloads: clawhost audit) keeps its rows this long.
# audit {
#   keep = "90d"
# }

# Where the journal, the outbox, sessions and approvals live. "sqlite" (the
# default) keeps one database file in data_dir, for one host. "postgres" uses
# a PostgreSQL server (docs/cluster.md); give the url with env(), it holds
# a password, which clawhost never logs or shows.
# storage {
#   engine = "postgres"
#   url    = env("CLAWHOST_DATABASE_URL")  # postgres://clawhost:PASSWORD@db:5432/clawhost?sslmode=verify-full
#            # a server not on this machine needs sslmode=verify-full (or require): refused otherwise
#   host_id   = "gw1"  # unique per host sharing the database; default: host name
#   lease_ttl = "15s"  # a dead host's work is taken over by the others within this
# }

# storage {
#   durability = "process"  # sqlite: no fsync; survives kill -9, not a power loss
#                           # (default "full" survives both; docs/guarantees.md)
# }

admin {
  # Status page, /status.json, /metrics, pairing approval; "" disables.
  # Every route but /healthz needs the admin token, made at the first start
  # in <data_dir>/admin.token (0600): clawhost prints the page's link with
  # it on the terminal at start, and `clawhost status`/`pairing`/`retry`
  # read the file. An address beyond loopback is refused without TLS.
  listen = "127.0.0.1:8791"
  # tls_cert = "admin.pem"      # PEM certificate and key: serve HTTPS (needed
  # tls_key  = "admin-key.pem"  # to listen beyond loopback)
  # pprof = false  # Go profiles under /debug/pprof/ (CPU, heap, goroutines), for
  #                # `go tool pprof http://127.0.0.1:8791/debug/pprof/profile`
}

session {
  # Which direct messages share a claude session: "main" (all of them, one
  # session), "per-peer" (one per sender, across the plugins of one source:
  # tg:5 and wa:5 stay apart unless identity_links join them) or
  # "per-channel-peer" (one per plugin instance and sender). Groups and
  # threads always have their own.
  dm_scope       = "per-channel-peer"
  # One person on several plugins, one session (with dm_scope = "per-peer";
  # each reply goes to the chat its message came from):
  # identity_links = { alice = ["tg:123456789", "dc:80351110224678912"] }
  reset_triggers = ["/new", "/reset"]  # start a new session; [] disables

  # Automatic reset; without a reset block sessions never expire.
  # mode: "none" | "idle" (after idle_minutes without a message) | "daily"
  # (sessions started before at_hour:00 local time are stale).
  # reset {
  #   mode    = "daily"
  #   at_hour = 4              # 0..23
  # }
  # Per kind of conversation ("direct", "group" or "thread"); unset
  # attributes inherit from reset {}.
  # reset_by_type "group" {
  #   mode         = "idle"
  #   idle_minutes = 240       # >= 1
  # }
}

queue {
  # A message that arrives while the session's turn runs: "followup" (runs
  # next, one turn per message) | "collect" (waiting messages run as one
  # turn) | "interrupt" (stops the running turn) | "steer" (passed to the
  # running turn).
  mode = "followup"
  cap  = 20            # messages waiting per session, >= 1
  drop = "summarize"   # beyond cap: summarize | old | new
  # summarize: the oldest are dropped but the next turn gets one line of
  # each; old / new: the oldest / newest are dropped and the chat is told
  # once (until the next turn starts) to send again what still matters.
  # debounce = "1500ms"  # wait for a pause and handle a burst together; unset or "0s" = off
}

messages {
  # response_prefix   = "[{model}]"  # before every reply
  text_limit          = 4000      # longest reply chunk; the channel's own limit still applies
  chunk_mode          = "length"  # length | newline (split only between paragraphs)
  group_history_limit = 50        # unaddressed group messages kept as context; 0 disables
  timezone            = "local"   # envelope timestamps: local | utc | an IANA name ("Europe/Berlin")
  streaming           = "auto"    # auto (live draft where the channel can edit) | blocks | draft | off
  verbose             = false     # show tool progress lines
  hook_timeout        = "5s"      # per hook call (before_agent_start, message_received, message_sending, agent_end)
  prompt_section      = true      # tell claude about the chat (channel, formatting, NO_REPLY, send_file)
  # prompt_template   = "section.tmpl"  # a Go template replacing that section's text
  turn_card           = "auto"    # auto (a live card with a Stop button where the channel edits) | off
  ping_after          = "30s"     # a short new message after a turn this long answered by an edit; "0s" never
  seen_reaction       = "👀"      # on a message that arrives while its chat's turn runs; "" none
  queued_notice       = false     # "Queued: 2 ahead." where the channel has no reactions
}

# Plugins. Each block is one instance, supervised by the host: `clawhost status`
# (or the status page) shows its state and what to do — starting, ready,
# needs_attention (the plugin needs you: a rejected token, a QR code to scan, a
# code or a link, shown with its message; `clawhost retry <instance>` or the
# page's button when it offers a retry; not restarted), degraded (crashed and
# restarted with backoff, or the plugin cannot reach its platform and retries by
# itself), misconfigured (the plugin rejected this block, at the file:line:col
# its error names: fix it, then SIGHUP), missing (binary not built: make build,
# then SIGHUP), unresponsive (failed the liveness probe; restarted), stopped.
# A plugin checks its own config {} block (a token's shape, a URL): `clawhost
# validate` and a reload report what it rejects at the value, before anything
# is started or stopped.

# The local web chat: open the link clawhost prints at start
# (http://127.0.0.1:8790/?token=...; `clawhost status` shows it too). The
# token is made at the first start and kept 0600 in
# <data_dir>/plugins/web/access.token, unless access_token is set.
plugin "web" {
  source = "webchat"
  config {
    listen = "127.0.0.1:8790"
    # access_token = env("WEBCHAT_TOKEN")   # at least 16 characters
    # tls_cert = "web.pem"                  # PEM certificate and key: HTTPS,
    # tls_key  = "web-key.pem"              # needed beyond loopback
  }
}

# Telegram, enabled when TELEGRAM_BOT_TOKEN is set. How to create the bot,
# approve people and find a group's id: docs/telegram.md.
plugin "tg" {
  source  = "telegram"
  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
  # run_as  = "clawhost-tg"  # when clawhost runs as root: the plugin runs as this user
  # Host settings for this instance only (changing them does not restart
  # the plugin): debounce, text_limit and queue_mode override queue {} and
  # messages {}; a reset {} block replaces session.reset.
  # debounce   = "0s"
  # text_limit = 4000
  # queue_mode = "collect"
  # reset {
  #   mode         = "idle"
  #   idle_minutes = 60
  # }
  # A plugin does not inherit clawhost's environment: it sees PATH, HOME,
  # TMPDIR, USER, LOGNAME, LANG, LC_*, TZ, GOMAXPROCS=1 and what env names
  # (values may be secrets: they are never printed; changing one restarts
  # the plugin).
  # Secrets the plugin declares go in config {} below.
  # env = { HTTPS_PROXY = env("HTTPS_PROXY", "") }
  # A token Telegram rejects shows as needs_attention ("get a new token from
  # @BotFather"); an unreachable Bot API as degraded. The variable is read at
  # start: after changing it, restart clawhost (a reload keeps the old value).
  config {
    token = env("TELEGRAM_BOT_TOKEN", "")
  }
}

# Discord, enabled when DISCORD_BOT_TOKEN is set. How to create the bot and
# invite it: docs/discord.md. Allow people and channels in access {}:
# "dc:<user id>" in allow_from for DMs, "dc:<channel id>" in groups for a
# server channel (its threads included).
# A rejected token (4004) or the Message Content intent not enabled in the
# Developer Portal (4014) shows as needs_attention with what to do; the
# plugin then waits (`clawhost retry dc` after enabling the intent).
plugin "dc" {
  source  = "discord"
  enabled = env("DISCORD_BOT_TOKEN", "") != ""
  config {
    token = env("DISCORD_BOT_TOKEN", "")
    # false: mention-only mode, no privileged intent needed; in servers the
    # bot then reads only messages that mention or reply to it.
    # message_content         = true
    # Server ids for slash commands (instant); empty registers them
    # globally, which can take up to an hour to show.
    # guilds                  = ["123456789012345678"]
    # slash_commands          = true
    # A mention in a channel opens a thread; one session per thread.
    # thread_per_conversation = false
    # thread_auto_archive     = 1440      # minutes: 60 | 1440 | 4320 | 10080
    # max_download_bytes      = 26214400  # inbound attachments
    # api_endpoint            = "https://discord.com"
  }
}

# Slack, enabled when SLACK_BOT_TOKEN is set. Create the app from the
# manifest in docs/slack.md (it names every scope and event), install it to
# the workspace, then export SLACK_BOT_TOKEN (xoxb-…, OAuth & Permissions)
# and SLACK_APP_TOKEN (xapp-…, Basic Information → App-Level Tokens, scope
# connections:write). Socket Mode needs no public URL. Allow people and
# channels in access {}: "sl:<member id>" (U…) in allow_from for DMs,
# "sl:<channel id>" (C…/G…) in groups; a thread is its own session, and an
# agent's chats may name one as "sl:<channel id>:<thread ts>".
# A rejected token (invalid_auth) or a missing scope (missing_scope, named)
# shows as needs_attention; fix it, then `clawhost retry sl`.
plugin "sl" {
  source  = "slack"
  enabled = env("SLACK_BOT_TOKEN", "") != ""
  config {
    bot_token = env("SLACK_BOT_TOKEN", "")
    app_token = env("SLACK_APP_TOKEN", "")
    # "events": Slack POSTs to listen (/slack/events, /slack/interactions,
    # /slack/commands) behind your TLS proxy; needs signing_secret.
    # mode               = "socket"
    # signing_secret     = env("SLACK_SIGNING_SECRET", "")
    # listen             = "127.0.0.1:3000"
    # Answer a mention at the top of a channel in a thread under it.
    # reply_in_thread    = false
    # The app's slash command: "/claw new" is /new; "" ignores it.
    # slash_command      = "/claw"
    # max_download_bytes = 52428800  # inbound files
    # api_endpoint       = "https://slack.com"
  }
}

# Matrix, enabled when MATRIX_USER_ID is set (docs/matrix.md): the bot is an
# ordinary account on any homeserver. Give its password (the plugin logs in
# once and keeps its device) or its access token. Invites are decided by
# access {} (owners and allow_from joined; a stranger's DM under "pairing"
# joined to get a code; other invites declined). Allow people and rooms in
# access {}: "mx:@alice:example.org" in allow_from, a room id
# "mx:!abc:example.org" in groups; a thread is its own session. A refused
# token shows as needs_attention; fix it, then `clawhost retry mx`.
# Encrypted rooms work (the device's keys in the plugin's state directory);
# the device is cross-signed from a recovery key: leave MATRIX_RECOVERY_KEY
# unset for a new account and the plugin makes one, written to
# matrix-recovery-key.txt in its state directory (keep a copy).
plugin "mx" {
  source  = "matrix"
  enabled = env("MATRIX_USER_ID", "") != ""
  config {
    homeserver   = env("MATRIX_HOMESERVER", "https://matrix.org")
    user_id      = env("MATRIX_USER_ID", "")
    password     = env("MATRIX_PASSWORD", "")
    # access_token = env("MATRIX_ACCESS_TOKEN", "")
    recovery_key = env("MATRIX_RECOVERY_KEY", "")
    # invites_from = ["@alice:example.org"]  # an extra allow, joined without asking the host
  }
}

# WhatsApp, enabled when WHATSAPP_ENABLED is set. The plugin joins a
# WhatsApp account as a linked device: on first start `clawhost status` and
# the status page show a QR code (WhatsApp on the phone → Settings → Linked
# devices → Link a device); the link is kept in data_dir. Allow people by
# phone number: allow_from = ["wa:+15551234567"] (it also matches the LID
# WhatsApp may address them by); groups = ["wa:<id>@g.us"].
# docs/whatsapp.md says more, and why a dedicated number and pacing matter.
plugin "wa" {
  source  = "whatsapp"
  enabled = env("WHATSAPP_ENABLED", "") != ""
  config {
    # Link with a code typed on the phone instead of a QR code.
    # pair_phone       = "+15551234567"
    # Personal number: your notes in "Message yourself" go to the agent;
    # only_self_chat keeps everyone else who writes to you away from it.
    # self_chat        = false
    # only_self_chat   = false
    # Random pause between two messages sent (ban risk).
    # pacing           = { min = "1s", max = "3s" }
    # Messages older than (re)connecting minus this get no answer.
    # backlog_margin   = "30s"
    # read_receipts    = true
    # device_name      = "clawhost"   # shown under Linked devices
    # If WhatsApp refuses this build as outdated (405) before an update:
    # web_version      = "2.3000.1031080782"
    # max_download_bytes = 67108864
  }
}

# Any Claude Code channel server (the official Telegram, Discord, iMessage
# and fakechat servers, community ones) as a clawhost channel: clawhost runs
# the server as its child and speaks MCP to it, each chat its own session.
# Allow people by the user_id the server puts in meta: allow_from =
# ["cc:123456789"]. docs/channels-mcp.md says how to run the official ones.
plugin "cc" {
  source  = "mcp-channel"
  enabled = false
  config {
    # The server's command line, or plugin_path: an installed Claude Code
    # plugin's directory, whose .mcp.json names it.
    command = ["bun", "run", "--cwd", "/path/to/claude-plugins-official/external_plugins/telegram", "--shell=bun", "--silent", "start"]
    # plugin_path   = "/path/to/claude-plugins-official/external_plugins/fakechat"
    # server        = "fakechat"  # with plugin_path: which entry of .mcp.json
    # env           = { TELEGRAM_BOT_TOKEN = env("TELEGRAM_BOT_TOKEN", "") }
    # dir           = "/path"     # default: plugin_path, else the instance's data dir
    # text_limit    = 4000        # 2000 for Discord
    # markup        = "none"      # "markdown" for Discord
    # chat_type     = "auto"      # chat id = sender id is direct, else group
    # start_timeout = 60          # seconds, start to tool list
    # max_download_bytes = 52428800
    # The one person the server trusts: approvals also go through its
    # permission relay, and its answers count as theirs.
    # permission_relay_from = "123456789"
  }
}

# /ping, answered without the agent.
plugin "ping" {
  source = "ping"
}

# Prepends the current date and time to every agent turn.
plugin "clock" {
  source = "clock-hook"
}

# Lifecycle hooks (docs/hooks.md) run in the order of their blocks:
# message_received before the queue, message_sending before the outbox,
# agent_end after each turn. on_error decides what a failing hook does:
# "skip" (default) passes the message or reply on, "drop" drops a
# message_received hook's message, "hold" keeps a message_sending hook's
# reply from the chat until the hook answers again (fail closed: a
# redacting hook). While a message_sending hook is enabled, replies are
# not streamed (streaming acts as "off").
# plugin "transcribe" {
#   source   = "transcribe-hook"   # voice notes become text before the queue
#   on_error = "skip"
#   # It parses what chats sent: run it inside bubblewrap, seeing the system's
#   # programs, its own data directory and the agents' media, not the host's
#   # files (docs/security.md). Without bubblewrap it is not started.
#   untrusted_input = true
#   config {
#     command = ["/usr/local/bin/whisper.sh", "{file}"]
#   }
# }

# Voice notes both ways (docs/voice.md): voice notes and audio files are
# transcribed for the agent before the queue, and /voice on|off|auto in a
# chat adds a spoken reply (espeak-ng by default, encoded by ffmpeg: both
# from Debian). Transcription takes time: raise messages.hook_timeout above
# stt_timeout. Without stt_command or stt_url voice notes arrive as files.
plugin "voice" {
  source  = "voice"
  enabled = false
  config {
    # stt_command  = ["whisper-cli", "-m", "/models/ggml-base.en.bin", "-nt", "-np", "-f", "{wav}"]
    # stt_url      = "http://127.0.0.1:8080/v1/audio/transcriptions"   # or an API
    # tts_command  = []        # empty: espeak-ng --stdin -w {out}
    # default_mode = "off"     # voice replies before /voice: off | on | auto
    # max_spoken   = 1000      # characters read aloud; the text is sent whole
  }
}

# /git from the phone: status, the diff (a .diff file when long), log, branch,
# commit and push of the chat's worktree (worktrees = true) or the agent's
# workspace; owners and members only. The repository's hooks, filters and
# other configured programs never run (docs/git.md). Remove the #s to enable;
# agent { tools = ["git.diff_summary"] } gives claude its read-only summary.
# plugin "git" {
#   source = "git"
#   config {
#     remote       = "/srv/git/project.git"  # where Push sends the branch; "" no Push
#     author_name  = "clawhost"
#     author_email = "clawhost@localhost"
#     # inline_limit = 3000                   # a longer diff is sent as a file
#   }
# }

# A tool for the agent: ranked search of its MEMORY.md and memory/*.md,
# answering passages with file and line (docs/tools.md). Grant it with
# agent { tools = ["memory.*"] }.
# plugin "memory" {
#   source       = "memory"
#   tool_timeout = "30s"   # a call that takes longer is stopped (claude gets a tool error)
# }

# Turns clawhost starts by itself (nobody has to write first). A schedule
# runs at the times of a five-field cron expression, in a chat
# ("<instance>:<chat id>"; group = true for a group), as if prompt had been
# written there; the reply goes to that chat. The heartbeat runs every
# interval; a reply that is only HEARTBEAT_OK is not delivered. A run missed
# while clawhost was down is made up once if it is less than an hour late;
# older ones are skipped (the store keeps the last runs; with a shared
# PostgreSQL store every host runs every schedule, and a run is answered
# once).
# schedule "morning" {
#   cron     = "0 9 * * 1-5"
#   timezone = "Europe/Berlin"   # default messages.timezone
#   chat     = "tg:123456789"
#   prompt   = "Summarize what is on my calendar today."
# }
# heartbeat {
#   every       = "30m"
#   chat        = "tg:123456789"
#   quiet_hours = "23:00-07:00"  # in timezone; skipped
#   # prompt    = "..."          # default: read HEARTBEAT.md, answer HEARTBEAT_OK if nothing is due
#   # model     = "haiku"        # its turns' model; none run while HEARTBEAT.md has only headings
# }
