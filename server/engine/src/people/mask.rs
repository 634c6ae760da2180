//! Masking of contact data for people not revealed in a workspace: names become
//! "M***a R***s" and emails "m****@empresa.mx" (the domain is the company's, public).

/// "María Robles" → "M***a R***s"; one-letter words become "M***".
pub fn name(full: &str) -> String {
    full.split_whitespace()
        .map(|w| {
            let chars: Vec<char> = w.chars().collect();
            match chars.as_slice() {
                [] => String::new(),
                [only] => format!("{only}***"),
                [first, .., last] => format!("{first}***{last}"),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// "maria.robles@empresa.mx" → "m****@empresa.mx".
pub fn email(address: &str) -> String {
    match address.split_once('@') {
        Some((local, domain)) => {
            let first = local.chars().next().unwrap_or('*');
            format!("{first}****@{domain}")
        }
        None => "****".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_emails_are_masked_keeping_only_edges_and_domain() {
        assert_eq!(name("María Robles"), "M***a R***s");
        assert_eq!(name("José  Núñez"), "J***é N***z");
        assert_eq!(email("maria.robles@empresa.mx"), "m****@empresa.mx");
        assert_eq!(email("sin-arroba"), "****");
    }
}
