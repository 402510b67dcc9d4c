# A structure nested 70 levels deep: refused at the bracket that opens level
# 65 (the plugin and config blocks are two levels), before the parser could
# recurse into it.
plugin "tg" {
  source = "telegram"
  config {
    token = "hunter2"
    tree = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
      "leaf"
    ]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
  }
}
