schedule "morning" {
  cron     = "0 9 * * mon-fri"
  timezone = "Mars/Olympus"
  chat     = "tgg:1001"
  prompt   = "Brief me."
}

schedule "nightly" {
  cron   = "0 25 * * *"
  chat   = "tg:1001"
  prompt = ""
}

heartbeat {
  every       = "soon"
  chat        = "tg:1001"
  quiet_hours = "23:00-7:00"
}

plugin "tg" {
  source  = "telegram"
  enabled = false
}
