package slack

// Manifest is the Slack app manifest with every scope and event the plugin uses
// (Scopes), to paste at Slack's "Create New App → From an app manifest";
// docs/slack.md shows the same text (TestManifestScopes keeps them equal).
const Manifest = `display_information:
  name: clawhost
features:
  app_home:
    messages_tab_enabled: true
    messages_tab_read_only_enabled: false
  bot_user:
    display_name: clawhost
    always_online: true
  slash_commands:
    - command: /claw
      description: clawhost commands (/claw new, /claw status, /claw help)
      usage_hint: "[command] [arguments]"
      should_escape: false
oauth_config:
  scopes:
    bot:
      - app_mentions:read
      - channels:history
      - channels:read
      - chat:write
      - commands
      - files:read
      - files:write
      - groups:history
      - groups:read
      - im:history
      - im:read
      - im:write
      - mpim:history
      - mpim:read
      - reactions:write
      - users:read
settings:
  event_subscriptions:
    bot_events:
      - app_mention
      - message.channels
      - message.groups
      - message.im
      - message.mpim
  interactivity:
    is_enabled: true
  org_deploy_enabled: false
  socket_mode_enabled: true
  token_rotation_enabled: false
`

// Setup is what `clawhost init` shows before it asks for the tokens
// (sdk.Plugin.Setup): how to create the app and where each token is.
const Setup = `Slack: create the app from this manifest (api.slack.com/apps → Create New App →
From an app manifest), install it to your workspace, then:
  bot_token: OAuth & Permissions → Bot User OAuth Token (xoxb-…)
  app_token: Basic Information → App-Level Tokens → Generate, scope connections:write (xapp-…)
Invite the bot to a channel with /invite; DMs work at once.

` + Manifest
