# The config file of Example (example_test.go): the token is misspelled.
plugin "tg" {
  source = "telegram"
  config {
    tokn = "123:abc"
  }
}
