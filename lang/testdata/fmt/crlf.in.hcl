server "a" {
  command = ["x"]
}
