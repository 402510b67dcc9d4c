session {
  dm_scope       = "per-channel"
  reset_triggers = ["/new", "reset", "", "/ new"]

  reset {
    mode         = "daily"
    at_hour      = 24
    idle_minutes = 0
  }

  reset_by_type "group" {
    mode = "idel"
  }

  reset_by_type "group" {
    at_hour = 3
  }

  reset_by_type "dm" {
    mode = "none"
  }
}
