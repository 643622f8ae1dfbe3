#!/bin/sh
# Test certificates for IMPI over TLS (impi.tls; docs/multicluster.md,
# "Security: TLS"), made with the openssl command into DIR:
#
#   ca.pem ca.key              the job's CA
#   site.pem site.key          a certificate of the job's CA (every side may use it)
#   site2.pem site2.key        a second one of the job's CA
#   other-ca.pem other-ca.key  an unrelated CA
#   other.pem other.key        a certificate of the unrelated CA
#   expired.pem expired.key    a certificate of the job's CA that expired in 2020
#
# usage: make_test_certs.sh DIR      (DIR is created; existing files are replaced)
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
cd "$dir"
umask 077
ossl() { openssl "$@" 2>/dev/null || { echo "make_test_certs.sh: openssl $1 failed" >&2; openssl "$@"; }; }

ext=leaf.ext
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n' >$ext

# A CA: self-signed, 10 years.
make_ca() {  # name subject
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" -out "$1.pem" \
    -days 3650 -subj "$2"
}
# A certificate signed by CA $2, valid for a year.
make_leaf() {  # name ca subject
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" -out "$1.csr" -subj "$3"
  ossl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 365 -extfile $ext -out "$1.pem"
  rm -f "$1.csr"
}

make_ca ca "/O=gridmpi test/CN=gridmpi test CA"
make_ca other-ca "/O=elsewhere/CN=unrelated CA"
make_leaf site ca "/O=gridmpi test/CN=site A"
make_leaf site2 ca "/O=gridmpi test/CN=site B"
make_leaf other other-ca "/O=elsewhere/CN=site X"

# An expired one: `openssl ca` takes explicit start and end dates.
mkdir -p ca-db
: >ca-db/index.txt
echo 1000 >ca-db/serial
cat >ca-db/ca.cnf <<CNF
[ ca ]
default_ca = test
[ test ]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
x509_extensions = leaf
[ any ]
commonName = supplied
organizationName = optional
[ leaf ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
CNF
ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout expired.key -out expired.csr \
  -subj "/O=gridmpi test/CN=expired site"
ossl ca -batch -config ca-db/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
  -startdate 20200101000000Z -enddate 20200201000000Z -notext
rm -f expired.csr
chmod 644 ./*.pem
