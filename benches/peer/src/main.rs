//! `peer-kube-cel CRD.yaml DOCUMENTS.yaml`: validates every document of a YAML stream
//! against the CRD's storage version with kube-cel 0.8 (`compile_schema` once, then
//! `Validator::validate_compiled` per document), on one thread, and prints how many were
//! valid. This is how a kube-rs user validates custom resources client-side; it is the peer
//! `benches/peer/run.py` times `cel validate` against.

use std::io::Read;

use kube_cel::{Validator, compile_schema};
use serde::Deserialize;
use serde_json::Value as Json;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, crd_path, docs_path] = args.as_slice() else {
        eprintln!("usage: peer-kube-cel CRD.yaml DOCUMENTS.yaml");
        std::process::exit(2);
    };
    let crd: Json = serde_yaml_ng::from_str(&std::fs::read_to_string(crd_path).expect("the CRD"))
        .expect("the CRD is YAML");
    let schema = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["storage"] == Json::Bool(true)))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .expect("a storage version with a schema");
    let compiled = compile_schema(&schema);
    let validator = Validator::new();
    let mut text = String::new();
    std::fs::File::open(docs_path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .expect("the documents");
    let (mut valid, mut invalid) = (0usize, 0usize);
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        let object = Json::deserialize(doc).expect("a YAML document");
        match validator.validate_compiled(&compiled, &object, None) {
            Ok(()) => valid += 1,
            Err(e) => {
                if invalid == 0 && std::env::var_os("PEER_SHOW_ERRORS").is_some() {
                    eprintln!("{e:?}");
                }
                invalid += 1
            }
        }
    }
    println!(
        "{} objects: {valid} valid, {invalid} invalid",
        valid + invalid
    );
}
