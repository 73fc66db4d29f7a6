#!/usr/bin/env bash
# WordNet 3.0 for the synonym edits of query rewriting, offline: Debian's wordnet-base +
# wordnet-sense-index, copied where NLTK's reader looks (<venv>/share/nltk_data/corpora/wordnet;
# NLTK refuses symlinks that leave its data folder). Debian ships no 'lexnames' file, so we
# write the 45-line table. Users with internet can instead run: python -c "import nltk; nltk.download('wordnet')".
# Never fatal: without apt-get (or root) it says so and leaves things as they are.
set -u
venv=${1:-.venv}
dest="$venv/share/nltk_data/corpora/wordnet"
if [ -f "$dest/lexnames" ] && [ -f "$dest/data.noun" ]; then exit 0; fi
if [ ! -f /usr/share/wordnet/data.noun ] || [ ! -f /usr/share/wordnet/index.sense ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index) >/dev/null 2>&1 \
      || { echo "install-wordnet: apt-get could not install wordnet-base (synonym edits will be unavailable)"; exit 0; }
  else
    echo "install-wordnet: no apt-get as root here; install Debian's wordnet-base + wordnet-sense-index or nltk.download('wordnet')"
    exit 0
  fi
fi
mkdir -p "$dest"
cp /usr/share/wordnet/* "$dest/"
i=0
for name in adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body \
  noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive \
  noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation \
  noun.shape noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication \
  verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception \
  verb.possession verb.social verb.stative verb.weather adj.ppl; do
  case $name in adj.*) cat=3 ;; adv.*) cat=4 ;; noun.*) cat=1 ;; verb.*) cat=2 ;; esac
  printf '%02d\t%s\t%d\n' "$i" "$name" "$cat"
  i=$((i + 1))
done > "$dest/lexnames"
echo "install-wordnet: WordNet 3.0 copied to $dest"
