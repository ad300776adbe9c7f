//! Parses every document of a stream (split at `\n---\n`, as the CLI splits it before YAML
//! sees it) to events with one parser, five times, and prints the best time. The events are
//! only counted: what differs between parsers is the scanning and parsing itself, which is
//! what `celerity_kubernetes::yaml` pays before it builds JSON from the events.

use std::time::Instant;

fn granit(doc: &str) -> usize {
    let mut n = 0;
    for event in granit_parser::Parser::new_from_str(doc) {
        event.expect("valid YAML");
        n += 1;
    }
    n
}

fn saphyr(doc: &str) -> usize {
    let mut n = 0;
    for event in saphyr_parser::Parser::new_from_str(doc) {
        event.expect("valid YAML");
        n += 1;
    }
    n
}

fn yaml_rust2(doc: &str) -> usize {
    let mut parser = yaml_rust2::parser::Parser::new_from_str(doc);
    let mut n = 0;
    loop {
        let (event, _) = parser.next_token().expect("valid YAML");
        n += 1;
        if matches!(event, yaml_rust2::parser::Event::StreamEnd) {
            return n;
        }
    }
}

fn libyaml_safer(doc: &str) -> usize {
    let mut bytes = doc.as_bytes();
    let mut parser = libyaml_safer::Parser::new();
    parser.set_input_string(&mut bytes);
    let mut n = 0;
    loop {
        let event = parser.parse().expect("valid YAML");
        n += 1;
        if matches!(event.data, libyaml_safer::EventData::StreamEnd) {
            return n;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(which)) = (args.next(), args.next()) else {
        eprintln!("usage: yaml-parsers STREAM.yaml granit|saphyr|yaml-rust2|libyaml-safer");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).expect("readable stream");
    let docs: Vec<&str> = text.split("\n---\n").collect();
    let parse: fn(&str) -> usize = match which.as_str() {
        "granit" => granit,
        "saphyr" => saphyr,
        "yaml-rust2" => yaml_rust2,
        "libyaml-safer" => libyaml_safer,
        other => panic!("unknown parser {other}"),
    };
    let mut best = f64::MAX;
    let mut events = 0;
    for _ in 0..5 {
        let start = Instant::now();
        events = docs.iter().map(|d| parse(d)).sum::<usize>();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{which:14} {path}: {} documents, {events} events, best of 5 {:.1} ms, {:.0} MB/s",
        docs.len(),
        best * 1e3,
        text.len() as f64 / best / 1e6
    );
}
