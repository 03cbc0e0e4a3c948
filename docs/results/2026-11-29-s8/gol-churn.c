#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(){FILE*f=fopen("utm.pgm","r");char line[256];int w,h,mx;fgets(line,256,f);
do{fgets(line,256,f);}while(line[0]=='#');sscanf(line,"%d %d",&w,&h);fscanf(f,"%d",&mx);
long n=(long)w*h;unsigned char*a=calloc(n,1),*b=calloc(n,1);long alive=0;
for(long i=0;i<n;i++){int v;fscanf(f,"%d",&v);a[i]=(v==0);alive+=a[i];}
printf("alive %ld\n",alive);
for(int s=0;s<12;s++){long births=0,deaths=0,cand=0,al=0;
 for(long y=0;y<h;y++)for(long x=0;x<w;x++){int c=0;
  for(int dy=-1;dy<=1;dy++)for(int dx=-1;dx<=1;dx++){if(!dx&&!dy)continue;long yy=y+dy,xx=x+dx;if(yy<0||yy>=h||xx<0||xx>=w)continue;c+=a[yy*w+xx];}
  long i=y*w+x;int nx=a[i]?(c==2||c==3):(c==3);b[i]=nx;if(!a[i]&&c>0)cand++;if(a[i])al++;
  if(nx&&!a[i])births++;if(!nx&&a[i])deaths++;}
 printf("step %d alive %ld candidates %ld births %ld deaths %ld\n",s,al,cand,births,deaths);
 unsigned char*t=a;a=b;b=t;}
}
