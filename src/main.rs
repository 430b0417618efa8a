fn main() -> std::process::ExitCode {
    lacuna::cli::main()
}
