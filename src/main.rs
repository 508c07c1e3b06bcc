fn main() -> std::process::ExitCode {
    kseg::cli::main()
}
