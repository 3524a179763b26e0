server "a" {
  command = ["x"]
}
