messages {
  timezone = "Mars/Olympus_Mons"
}
