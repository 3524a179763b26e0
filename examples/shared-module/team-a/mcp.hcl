# Team A uses the shared notes module as it is.

module "notes" {
  source       = "../modules/notes"
  allow_writes = true
}
